import { ApiProperty } from '@nestjs/swagger';

/** The Kling-style success envelope; each reply extends it with its `data`. */
export class SuccessEnvelopeDto {
  @ApiProperty({ description: '0 on success.', example: 0 })
  code!: number;

  @ApiProperty({ example: 'SUCCEED' })
  message!: string;

  @ApiProperty({ description: 'Id of this request (also in the X-Request-Id header).', example: '9f0d7a9e-3b1c-4c55-8f7e-2b1d0c9a8e71' })
  request_id!: string;
}
