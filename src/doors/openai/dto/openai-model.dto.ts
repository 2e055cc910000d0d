import { ApiProperty } from '@nestjs/swagger';

/** OpenAI's Model object. */
export class OpenAiModelDto {
  @ApiProperty({ example: 'gpt-image-1' }) id!: string;
  @ApiProperty({ enum: ['model'] }) object!: 'model';
  @ApiProperty({ description: 'Unix seconds (0: not known here).', example: 0 }) created!: number;
  @ApiProperty({ description: 'The vendor behind it (its channel protocol), or `sandbox`.', example: 'openai' }) owned_by!: string;
}

export class OpenAiModelListDto {
  @ApiProperty({ enum: ['list'] }) object!: 'list';
  @ApiProperty({ type: OpenAiModelDto, isArray: true }) data!: OpenAiModelDto[];
}
