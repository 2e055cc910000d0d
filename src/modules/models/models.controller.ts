import { Controller, Get, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ApiErrors, KEYED_ROUTE_ERRORS } from '../../common/swagger/api-errors.decorator.js';
import { API_KEY_SCHEME } from '../../common/swagger/security-schemes.js';
import { type ModelEntry, type TaskKind, TASK_KINDS } from '../../common/tasks/task-kind.js';
import { TASK_KIND_MODULES } from '../task-kinds.js';

/** The operations whose tasks name models, each with its entries' schema (its definition's `models`). */
const MODEL_DTOS = TASK_KIND_MODULES.map((m) => m.kind.definition.models?.dto).filter((dto) => dto !== undefined);

@ApiTags('models')
@ApiBearerAuth(API_KEY_SCHEME)
@ApiExtraModels(...MODEL_DTOS)
@Controller('models')
export class ModelsController {
  constructor(@Inject(TASK_KINDS) private readonly kinds: TaskKind[]) {}

  @Get()
  @ApiOperation({
    operationId: 'listModels',
    summary: 'The models you can ask for',
    description:
      "Each model the configured channels serve, for every operation whose requests name a model (video, speech, …; with the sandbox, every vendor's model as its catalog describes it, and the model `sandbox` where an operation has one, which makes anything the sandbox renders when a request names it), what it can make in its operation's own fields (`operation` says which) and its price in credits. A request no model can make is refused with 400, naming the field and the models that could.",
  })
  @ApiOkResponse({ schema: { type: 'object', required: ['models'], properties: { models: { type: 'array', items: { oneOf: MODEL_DTOS.map((dto) => ({ $ref: getSchemaPath(dto) })) } } } } })
  @ApiErrors(KEYED_ROUTE_ERRORS)
  async list(): Promise<{ models: ModelEntry[] }> {
    const lists = await Promise.all(this.kinds.map((k) => k.models?.() ?? Promise.resolve([])));
    return { models: lists.flat() };
  }
}
