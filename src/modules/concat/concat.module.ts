import { Module } from '@nestjs/common';
import { ClipsModule } from '../clips/clips.module.js';
import { ConcatController } from './concat.controller.js';
import { ConcatKind } from './concat.kind.js';
import { ConcatService } from './concat.service.js';

@Module({
  imports: [ClipsModule],
  controllers: [ConcatController],
  providers: [ConcatKind, ConcatService],
  exports: [ConcatKind],
})
export class ConcatModule {
  static readonly kind = ConcatKind;
}
