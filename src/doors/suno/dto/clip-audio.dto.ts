import { ApiProperty } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { PCM16_EXPORTS, type Pcm16Export } from '../../../infra/ffmpeg/audio-export.js';

export const CLIP_AUDIO_FORMATS = Object.keys(PCM16_EXPORTS) as Pcm16Export[];

export class ClipAudioQueryDto {
  @ApiProperty({ enum: CLIP_AUDIO_FORMATS, description: 'wav: 16-bit PCM WAV; flac: 16-bit FLAC. Both at the clip\'s own sample rate and channel count.', example: 'wav' })
  @IsIn(CLIP_AUDIO_FORMATS, { message: `format must be one of ${CLIP_AUDIO_FORMATS.join(', ')}` })
  format!: Pcm16Export;
}
