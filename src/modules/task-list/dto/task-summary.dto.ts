import { ApiProperty } from '@nestjs/swagger';
import { TASK_STATES } from '../../../common/tasks/task-kind.js';
import { CLIP_TYPES } from '../../clips/clip-media.js';

/** A task of any operation, as the cross-operation list shows it. */
export class TaskSummaryDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  /** Its values are set on the OpenAPI document from the registry (see applyKindNames). */
  @ApiProperty({ description: 'The operation (task kind).', example: 'video' })
  kind!: string;

  @ApiProperty({ example: 'team-video' })
  owner!: string;

  @ApiProperty({ enum: TASK_STATES, description: 'The normalized state: queued → running → succeeded | failed.', example: 'succeeded' })
  state!: string;

  @ApiProperty({ description: "The state as the operation's own API names it (Kling's succeed, Luma's completed, Suno's SUCCESS…).", example: 'completed' })
  status!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The door it came through: the API it was asked in (luma, kling, openai, suno…), which its record_path and callbacks speak. Null only for an operation no door serves.',
    example: 'luma',
  })
  door!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "The model its request named (a joined song: its last part's); null when it named none (any model able to do it).",
    example: 'ray-2',
  })
  model!: string | null;

  @ApiProperty({ type: String, nullable: true, description: "The caller's own id of the task (external_task_id), when it gave one.", example: null })
  external_id!: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When a worker first started it.' })
  started_at!: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When it reached its final state.' })
  finished_at!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Why it failed.', example: null })
  message!: string | null;

  @ApiProperty({ type: 'integer', description: 'Credits charged at acceptance (a failed task gives them back).', example: 5 })
  credits!: number;

  @ApiProperty({ type: String, nullable: true, description: "The operation's own route that answers this task's record (GET, with the owner's API key).", example: '/video-b/v1/generations/0b6f3c1e-5d2a-4f7e-9c1b-2a3d4e5f6a7b' })
  record_path!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "The operation's own route that answers this task's callback deliveries, when it has one (GET /tasks/{id}/callbacks answers them for every operation).",
    example: '/video-b/v1/generations/0b6f3c1e-5d2a-4f7e-9c1b-2a3d4e5f6a7b/callbacks',
  })
  callbacks_path!: string | null;
}

export class TaskPageDto {
  @ApiProperty({ type: TaskSummaryDto, isArray: true, description: 'Newest first (by creation time, then id).' })
  tasks!: TaskSummaryDto[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass it as cursor for the next page (same filters); null on the last page.' })
  next_cursor!: string | null;
}

export class TaskTimelineEntryDto {
  @ApiProperty({ enum: TASK_STATES, example: 'running' })
  state!: string;

  @ApiProperty({ description: "The state as the operation's API names it.", example: 'dreaming' })
  status!: string;

  @ApiProperty({ format: 'date-time', description: 'When the task entered it.' })
  at!: string;
}

export class TaskMediaDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ description: 'What the file is to its task: image, video, thumbnail, clip, cover…; an input: frame0, frame1, ref0…, fit0, input, mask.', example: 'video' })
  role!: string;

  @ApiProperty({ type: 'integer', description: 'Its place among the files of its role (from 0).', example: 0 })
  index!: number;

  @ApiProperty({ example: 'video/mp4' })
  content_type!: string;

  @ApiProperty({ type: 'integer', example: 482113 })
  size_bytes!: number;

  @ApiProperty({ description: 'A signed link (GET /media/{id}, no key needed), on the base this request used (PUBLIC_BASE_URL when set).', example: 'http://localhost:3000/media/0b6f3c1e-5d2a-4f7e-9c1b-2a3d4e5f6a7b?expires=1795222444&signature=…' })
  url!: string;
}

/** A word of a clip's lyrics with its time. */
export class TaskClipWordDto {
  @ApiProperty({ example: 'Morning' })
  word!: string;

  @ApiProperty({ description: "Seconds from the clip's start.", example: 1.25 })
  start_s!: number;

  @ApiProperty({ description: "Seconds from the clip's start.", example: 1.7 })
  end_s!: number;
}

/** Another clip a clip is made of, with the task that made it. */
export class TaskClipLinkDto {
  @ApiProperty({ format: 'uuid' })
  clip_id!: string;

  @ApiProperty({ type: String, nullable: true, format: 'uuid', description: 'The task that made that clip (null: it is gone, its task deleted).' })
  task_id!: string | null;

  @ApiProperty({ type: Number, nullable: true, description: 'The second of that clip this one continues from (a continuation), or at which it was cut (a joined part; null: kept whole).', example: 12 })
  at_s!: number | null;
}

/** One clip of a music, concat or upload task: its words and where it comes from. */
export class TaskClipDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty({ type: 'integer', description: "Its place among its task's clips: its audio is the media of role clip at this index, its cover of role cover.", example: 0 })
  index!: number;

  @ApiProperty({ enum: CLIP_TYPES, description: 'gen: a take (a new song or a continuation); upload: an uploaded file; concat: a joined song; stem: one stem split from a clip (a stems task\'s).', example: 'gen' })
  type!: string;

  @ApiProperty({ type: Number, nullable: true, description: 'Seconds (null until its task succeeded).', example: 30 })
  duration!: number | null;

  @ApiProperty({ type: String, nullable: true, description: 'Its title: the one its vendor gave, else the one asked.', example: 'Morning tide' })
  title!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The lyrics it sings: as its vendor reported them, else as asked (null: none, an instrumental or an upload).', example: '[Verse]\nMorning tide upon the sand' })
  lyrics!: string | null;

  @ApiProperty({ type: TaskClipWordDto, isArray: true, nullable: true, description: 'Its lyrics timed word by word, where its maker timed them (null: not timed).' })
  timed_lyrics!: TaskClipWordDto[] | null;

  @ApiProperty({ type: TaskClipLinkDto, nullable: true, description: 'The clip it continues and the second it continues from (null: a new song).' })
  continues!: TaskClipLinkDto | null;

  @ApiProperty({ type: TaskClipLinkDto, isArray: true, description: 'A joined song: its parts in order, each with the second it was cut at. Empty otherwise.' })
  parts!: TaskClipLinkDto[];
}

/** One task, as GET /tasks/{id} answers it: its summary, its states' times, its files and its record. */
export class TaskDetailDto extends TaskSummaryDto {
  @ApiProperty({ type: TaskTimelineEntryDto, isArray: true, description: 'The states it went through, in order, with when (what the task row records).' })
  timeline!: TaskTimelineEntryDto[];

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      "What it asked, in the gateway's own words whatever its door: the operation's normalized request as the task stores it (video: prompt, model, aspectRatio, resolution, durationS, " +
      'firstFrame, lastFrame, referenceImages…; image: mode, prompt, n, size…; music: lyrics, description, style, title, model…; speech: input, voice, format, speed…). ' +
      "Left out: the door (see door) and the gateway's own bookkeeping (facts it read of inputs, ids it gave, parts it resolved).",
    example: { prompt: 'A red kite over the sea at dawn', model: 'ray-2', aspectRatio: '16:9', resolution: '720p', durationS: 5, loop: false, firstFrame: { type: 'image', upload: true } },
  })
  request!: Record<string, unknown>;

  @ApiProperty({
    type: TaskMediaDto,
    isArray: true,
    description: "The images that came with its request (first and last frames, reference images, an edit's input images and mask) or that the gateway made of them before sending (a fitted frame: fit0), as signed links, by role and index.",
  })
  inputs!: TaskMediaDto[];

  @ApiProperty({ type: TaskMediaDto, isArray: true, description: 'Its stored result files (of a task that succeeded and whose media has not expired).' })
  media!: TaskMediaDto[];

  @ApiProperty({ description: 'Its media was removed by retention (RESULT_RETENTION_DAYS).', example: false })
  media_expired!: boolean;

  @ApiProperty({
    type: TaskClipDto,
    isArray: true,
    description: "A music, concat, upload or stems task's clips (each take of a song, a joined song, an uploaded file, each stem), in order: their titles, lyrics and timed lyrics, and what each continues or joins, with those clips' tasks. Empty for other operations.",
  })
  clips!: TaskClipDto[];

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The operation's own record of the task, as record_path answers it (for the routes that wrap it, the envelope's data) and as its callbacks carry it.",
  })
  record!: Record<string, unknown>;
}
