import { ApiProperty } from '@nestjs/swagger';
import { IsHttpUrl } from '../../../common/validation/validators.js';

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
