import { Global, Injectable, Logger, Module, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { describeFfmpeg, type FfmpegBinary, useFfmpeg } from './ffmpeg-binary.js';

/** Chooses the ffmpeg every run uses (FFMPEG_PATH, else the system's, else the npm package's) at start, and says which. */
@Injectable()
export class FfmpegChoice implements OnModuleInit {
  private readonly logger = new Logger('Ffmpeg');
  binary?: FfmpegBinary;

  constructor(private readonly config: AppConfig) {}

  onModuleInit(): void {
    this.binary = useFfmpeg(this.config.ffmpegPath); // throws (the service does not start) when FFMPEG_PATH does not run
    const { level, message } = describeFfmpeg(this.binary);
    const line = { msg: message, ffmpeg_path: this.binary.path, ffmpeg_version: this.binary.version, ffmpeg_source: this.binary.source };
    if (level === 'warn') this.logger.warn(line);
    else this.logger.log(line);
  }
}

@Global()
@Module({ providers: [FfmpegChoice], exports: [FfmpegChoice] })
export class FfmpegModule {}
