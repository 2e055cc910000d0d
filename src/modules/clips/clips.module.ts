import { Module } from '@nestjs/common';
import { ClipRecords } from './clip-records.js';
import { ClipsRepository } from './clips.repository.js';
import { MusicFetchController } from './music-fetch.controller.js';
import { MusicFetchService } from './music-fetch.service.js';

/** The clips of music, concat and upload tasks: their table, their chains, and the aggregators' fetch routes. */
@Module({
  controllers: [MusicFetchController],
  providers: [ClipsRepository, ClipRecords, MusicFetchService],
  exports: [ClipsRepository, ClipRecords],
})
export class ClipsModule {}
