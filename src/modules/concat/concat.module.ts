import { Module } from '@nestjs/common';
import { ClipsModule } from '../clips/clips.module.js';
import { ConcatKind } from './concat.kind.js';

@Module({
  imports: [ClipsModule],
  providers: [ConcatKind],
  exports: [ConcatKind],
})
export class ConcatModule {
  static readonly kind = ConcatKind;
}
