import { Module } from '@nestjs/common';
import { ClipsRepository } from './clips.repository.js';

/** The clips of music, concat and upload tasks: their table and their chains (the Suno-style door renders them). */
@Module({
  providers: [ClipsRepository],
  exports: [ClipsRepository],
})
export class ClipsModule {}
