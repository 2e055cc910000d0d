import { Body, Controller, Get, HttpCode, Injectable, Module, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import type { Principal } from '../../src/common/auth/credential.js';
import { CurrentPrincipal } from '../../src/common/decorators/auth.decorators.js';
import { AppError } from '../../src/common/errors/app-error.js';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../src/common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../src/common/swagger/security-schemes.js';
import { TaskEngine } from '../../src/common/tasks/task-engine.js';
import type { KindDefinition, Price, StepOutcome, Success, Task, TaskKind } from '../../src/common/tasks/task-kind.js';
import { TaskRepository } from '../../src/common/tasks/task.repository.js';
import { AppConfig } from '../../src/infra/config/app-config.js';
import { IsHttpUrl } from '../../src/common/validation/validators.js';
import { runFfmpeg } from '../../src/infra/ffmpeg/ffmpeg.js';

/** What a hanging echo task's ffmpeg carries in its arguments, to be found among the machine's processes. */
export function hangMarker(taskId: string): string {
  return `mgw-hang-${taskId}`;
}

/**
 * A task kind that lives only in the tests: one definition (this file) plugged into the real engine
 * beside the registry's kinds. Its step echoes its parameters, or fails, as the request asks.
 */
interface EchoParams {
  /** hang: the step starts an ffmpeg that waits for input forever (`mgw-hang-<task id>` in its arguments), and never returns. */
  outcome: 'succeed' | 'fail' | 'hang';
  units: number;
}
interface EchoResult {
  echoed: number;
}
type EchoTask = Task<EchoParams, EchoResult>;

export const ECHO_DEFINITION: KindDefinition = {
  name: 'echo',
  states: { queued: 'waiting', running: 'working', succeeded: 'done', failed: 'broken' },
  noun: 'echo',
  settings: { prefix: 'ECHO', timeoutS: 60, prices: { unit: { env: 'PRICE_ECHO_UNIT', default: 2 } } },
  openapi: { tag: 'echo', description: 'A task kind of the tests.' },
};

class CreateEchoDto {
  @ApiProperty({ enum: ['succeed', 'fail', 'hang'] })
  @IsIn(['succeed', 'fail', 'hang'], { message: 'outcome must be "succeed", "fail" or "hang"' })
  outcome!: 'succeed' | 'fail' | 'hang';

  @ApiProperty({ type: 'integer', minimum: 1, maximum: 9 })
  @IsInt({ message: 'units must be a whole number' })
  @Min(1)
  @Max(9)
  units!: number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsHttpUrl()
  callback_url?: string;
}

class EchoRecordDto {
  @ApiProperty()
  id!: string;

  @ApiProperty({ enum: Object.values(ECHO_DEFINITION.states) })
  state!: string;

  @ApiProperty({ type: 'integer', nullable: true })
  echoed!: number | null;

  @ApiProperty({ type: String, nullable: true })
  message!: string | null;
}

function record(task: EchoTask): EchoRecordDto {
  return { id: task.id, state: ECHO_DEFINITION.states[task.state], echoed: task.result?.echoed ?? null, message: task.message };
}

@Injectable()
export class EchoKind implements TaskKind<EchoParams, EchoResult, number> {
  static readonly definition = ECHO_DEFINITION;
  readonly definition = ECHO_DEFINITION;

  constructor(private readonly config: AppConfig) {}

  /** One slot per unit, PRICE_ECHO_UNIT credits each. */
  price(params: EchoParams): Price {
    return { slots: params.units, credits: params.units * this.config.kinds.echo.prices.unit };
  }

  async step(task: EchoTask): Promise<StepOutcome<number>> {
    if (task.params.outcome === 'hang') {
      // ffmpeg reads raw audio from a pipe nobody ever writes to or closes: only the step's end can stop it
      await runFfmpeg(['-f', 's16le', '-ar', '8000', '-ac', '1', '-i', 'pipe:0', '-metadata', `comment=${hangMarker(task.id)}`, '-f', 'null', '-'], { feed: () => new Promise<void>(() => undefined), limitMs: 10 * 60_000 }); // the step's time limit stops it, long before its own
      return { kind: 'failed', reason: 'ffmpeg stopped' };
    }
    return task.params.outcome === 'fail' ? { kind: 'failed', reason: `asked to fail after ${task.params.units} unit(s)` } : { kind: 'done', result: task.params.units };
  }

  async store(_task: EchoTask, units: number): Promise<Success<EchoResult>> {
    return { result: { echoed: units }, details: [], discard: async () => undefined };
  }

  async notifications(tasks: EchoTask[]): Promise<EchoRecordDto[]> {
    return tasks.map(record);
  }
}

@ApiTags('echo')
@ApiBearerAuth(API_KEY_SCHEME)
@Controller('echo/tasks')
class EchoController {
  constructor(
    private readonly engine: TaskEngine,
    private readonly tasks: TaskRepository,
    private readonly kind: EchoKind,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({ type: EchoRecordDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'INVALID_PARAMETER', 'CONCURRENCY_LIMITED', 'CREDITS_EXHAUSTED'])
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateEchoDto): Promise<EchoRecordDto> {
    return record(await this.engine.submit(this.kind, { owner: principal.owner, params: { outcome: body.outcome, units: body.units }, callbackUrl: body.callback_url }));
  }

  @Get(':id')
  @ApiOkResponse({ type: EchoRecordDto })
  @ApiErrors([...KEYED_ROUTE_ERRORS, 'NOT_FOUND'])
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<EchoRecordDto> {
    const task = await this.tasks.findForOwner<EchoParams, EchoResult>('echo', principal.owner, id);
    if (!task) throw new AppError('NOT_FOUND', `No echo task ${id} among yours`);
    return record(task);
  }
}

@Module({ controllers: [EchoController], providers: [EchoKind], exports: [EchoKind] })
export class EchoModule {
  static readonly kind = EchoKind;
}
