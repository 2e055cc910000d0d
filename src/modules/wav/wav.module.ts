import { Module } from '@nestjs/common';
import { WavKind } from './wav.kind.js';

/** WAV conversion of a stored music track, as a task (its door, src/doors/sunoapi/, submits to the kind). */
@Module({
  providers: [WavKind],
  exports: [WavKind],
})
export class WavModule {
  static readonly kind = WavKind;
}
