import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Length, Matches, Max, Min, registerDecorator, type ValidationArguments } from 'class-validator';
import { TASK_STATES, type TaskState } from '../../../common/tasks/task-kind.js';
import { IsOwnerName, OWNER_MAX_CHARS, OWNER_PATTERN } from '../../../common/validation/owner.js';
import { QueryInteger } from '../../../common/validation/validators.js';
import { decodeCursor } from '../task-cursor.js';

/** Tasks a page holds when `limit` is not given. */
const TASKS_PER_PAGE = 20;

/** An empty query value means the filter is not given (a form that sends every field). */
const emptyAsAbsent = Transform(({ value }: { value: unknown }) => (value === '' ? undefined : value));

/** A cursor this API gave (next_cursor of a page). */
function IsTaskCursor(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isTaskCursor',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && decodeCursor(value) !== null,
        defaultMessage: (args?: ValidationArguments) => `${args?.property} must be the next_cursor of a page of this list, as it was given`,
      },
    });
}

/** GET /tasks: filters, page size and where the page starts. Each rule's message names its field. */
export class ListTasksQueryDto {
  @ApiPropertyOptional({ description: 'Only tasks of this operation (task kind).', example: 'video' })
  @emptyAsAbsent
  @IsOptional()
  @IsString({ message: 'kind must be an operation name' })
  @Matches(/^[a-z][a-z0-9_-]{0,31}$/, { message: 'kind must be an operation name, such as expand or video' })
  kind?: string;

  @ApiPropertyOptional({ enum: TASK_STATES, description: 'Only tasks in this state (the normalized one, whatever the operation calls it).' })
  @emptyAsAbsent
  @IsOptional()
  @IsIn(TASK_STATES, { message: `state must be one of ${TASK_STATES.join(', ')}` })
  state?: TaskState;

  @ApiPropertyOptional({
    description:
      "Only tasks that came through this door (the API they were asked in, as each task's door says): luma, kling or openai for videos, kling or openai for images, " +
      'kling for expand, suno, sunoapi or elevenlabs for music, suno for concat and uploads, sunoapi for WAV conversions, openai for speech. A door no task came through lists none.',
    example: 'kling',
    pattern: '^[a-z][a-z0-9_-]{0,31}$',
  })
  @emptyAsAbsent
  @IsOptional()
  @IsString({ message: 'door must be the name of a door, such as luma, kling, openai or suno' })
  @Matches(/^[a-z][a-z0-9_-]{0,31}$/, { message: 'door must be the name of a door, such as luma, kling, openai or suno (lower-case letters, digits, _ and -, up to 32)' })
  door?: string;

  @ApiPropertyOptional({
    description: "Only tasks whose request names this model (as each task's model says; GET /models lists them). A task that named none (any model that could do it) is not among them.",
    example: 'ray-2',
    pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$',
  })
  @emptyAsAbsent
  @IsOptional()
  @IsString({ message: 'model must be a model name, as GET /models lists them' })
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, { message: 'model must be a model name, as GET /models lists them (1 to 64 letters, digits and . _ : -)' })
  model?: string;

  @ApiPropertyOptional({
    description: 'Admin key only: only the tasks of this owner. With an API key, naming another owner answers 403 (your own is the same as leaving it out).',
    example: 'team-video',
    minLength: 1,
    maxLength: OWNER_MAX_CHARS,
    pattern: OWNER_PATTERN.source,
  })
  @emptyAsAbsent
  @IsOptional()
  @IsOwnerName()
  owner?: string;

  @ApiPropertyOptional({ description: 'A task id, or an external id (external_task_id): only the tasks it names.', example: 'order-1', minLength: 1, maxLength: 256 })
  @emptyAsAbsent
  @IsOptional()
  @IsString({ message: 'q must be a task id or an external id' })
  @Length(1, 256, { message: 'q must be 1 to 256 characters long' })
  q?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Only tasks created at or after this time (ISO 8601, e.g. 2026-11-01T00:00:00Z or 2026-11-01).', example: '2026-11-01T00:00:00Z' })
  @emptyAsAbsent
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'created_after must be an ISO 8601 date or date-time, e.g. 2026-11-01T00:00:00Z' })
  created_after?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Only tasks created before this time (ISO 8601).', example: '2026-12-01T00:00:00Z' })
  @emptyAsAbsent
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'created_before must be an ISO 8601 date or date-time, e.g. 2026-12-01T00:00:00Z' })
  created_before?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: TASKS_PER_PAGE, description: 'Tasks per page.' })
  // an empty value is no value: the default (the key present with nothing would otherwise overwrite it)
  @Transform(({ value }: { value: unknown }) => (value === '' ? TASKS_PER_PAGE : value))
  @IsOptional()
  @QueryInteger()
  @IsInt({ message: 'limit must be a whole number from 1 to 100' })
  @Min(1, { message: 'limit must be a whole number from 1 to 100' })
  @Max(100, { message: 'limit must be a whole number from 1 to 100' })
  limit: number = TASKS_PER_PAGE;

  @ApiPropertyOptional({ description: "The previous page's next_cursor: the page after it, with the same filters.", maxLength: 200 })
  @emptyAsAbsent
  @IsOptional()
  @IsTaskCursor()
  cursor?: string;
}
