import { ApiProperty } from '@nestjs/swagger';
import { IsHttpUrl } from '../../../common/validation/validators.js';
import { NullAsAbsent } from '../../../common/validation/body-fields.js';

@NullAsAbsent()
export class CreateAudioUploadDto {
  @ApiProperty({ description: 'http(s) URL of the audio file to register.', example: 'https://example.com/clips/intro.mp3', maxLength: 2048 })
  @IsHttpUrl()
  url!: string;
}

export class AudioUploadResultDto {
  @ApiProperty({ example: 'success' })
  code!: string;

  @ApiProperty({ example: '' })
  message!: string;

  @ApiProperty({ description: 'Task id of the uploaded clip, to continue or combine music from it.', format: 'uuid', example: '5b6c7d8e-9f0a-4b1c-8d2e-3f4a5b6c7d8e' })
  data!: string;
}

export class AudioUploadDetailDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ example: 'https://example.com/clips/intro.mp3' })
  url!: string;

  @ApiProperty({ enum: ['pending', 'ready', 'failed'], example: 'ready' })
  status!: string;

  @ApiProperty({ type: String, nullable: true, description: 'mp3, wav, flac, ogg, opus, m4a… read from the file itself.', example: 'mp3' })
  format!: string | null;

  @ApiProperty({ type: Number, nullable: true, description: 'Seconds.', example: 12.5 })
  duration!: number | null;

  @ApiProperty({ type: Number, nullable: true, example: 204800 })
  size_bytes!: number | null;

  @ApiProperty({ type: String, nullable: true, description: 'SHA-256 of the file, hex.', example: null })
  sha256!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    format: 'uri',
    description: 'Signed link to the kept clip (expires after RESULT_URL_TTL_S; read the upload again for a fresh one), for later music to start from. Null until ready, when the provider keeps the clip upstream, and after retention.',
    example: 'http://localhost:3000/media/7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f0a?expires=1795000000&signature=abc',
  })
  clip_url!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Why the upload failed.', example: null })
  error!: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T10:00:00.000Z' })
  created_at!: string;
}

export class AudioUploadDetailResultDto {
  @ApiProperty({ example: 'success' })
  code!: string;

  @ApiProperty({ example: '' })
  message!: string;

  @ApiProperty({ type: AudioUploadDetailDto })
  data!: AudioUploadDetailDto;
}
