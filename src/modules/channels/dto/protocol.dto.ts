import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CHANNEL_OPERATIONS, type ChannelOperation } from '../channel-protocols.js';

export class ProtocolBaseUrlDto {
  @ApiProperty({ description: "What a channel's base_url is: the part of the vendor's URLs before its paths.", example: 'the base before /v1/, for expand and video alike' })
  rule!: string;

  @ApiProperty({ description: 'An example.', example: 'https://api-singapore.klingai.com' })
  example!: string;
}

/** GET /admin/protocols: one vendor a channel may speak, as its descriptor says (src/vendors/<vendor>/). */
export class ProtocolDto {
  @ApiProperty({ description: 'The channel protocol.', example: 'kling' })
  protocol!: string;

  @ApiProperty({ description: 'Its name in a sentence.', example: "Kling's API" })
  title!: string;

  @ApiPropertyOptional({ description: 'What it makes, where more than its operations say.', example: "its models, Google's Veo, ByteDance's Seedance" })
  makes?: string;

  @ApiProperty({ enum: CHANNEL_OPERATIONS, isArray: true, description: 'The operations it serves.', example: ['expand', 'video'] })
  operations!: ChannelOperation[];

  @ApiProperty({ type: 'array', items: { type: 'array', items: { type: 'string', enum: [...CHANNEL_OPERATIONS] } }, description: 'The operations one channel may take together (a gateway: one group per channel); each of `operations` alone otherwise.', example: [['expand', 'video']] })
  groups!: ChannelOperation[][];

  @ApiProperty({ type: [String], description: 'The credential fields a channel of it needs.', example: ['access_key', 'secret_key'] })
  credentials!: string[];

  @ApiProperty({ type: ProtocolBaseUrlDto })
  base_url!: ProtocolBaseUrlDto;
}
