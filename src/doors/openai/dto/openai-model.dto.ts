import { ApiProperty } from '@nestjs/swagger';

/** OpenAI's Model object. */
export class OpenAiModelDto {
  @ApiProperty({ example: 'gpt-image-1' }) id!: string;
  @ApiProperty({ enum: ['model'] }) object!: 'model';
  @ApiProperty({ description: 'Unix seconds (0: not known here).', example: 0 }) created!: number;
  @ApiProperty({ description: 'The vendor behind it (its channel protocol), or `sandbox`.', example: 'openai' }) owned_by!: string;
  @ApiProperty({ description: "A gateway extension: whether what it can do is what a channel declared (a vendor model the gateway's catalog does not know), not the catalog's.", example: false }) declared!: boolean;
}

export class OpenAiModelListDto {
  @ApiProperty({ enum: ['list'] }) object!: 'list';
  @ApiProperty({ type: OpenAiModelDto, isArray: true }) data!: OpenAiModelDto[];
}
