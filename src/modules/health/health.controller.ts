import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult, HealthIndicatorService } from '@nestjs/terminus';
import { Public } from '../../common/decorators/auth.decorators.js';
import { AppError } from '../../common/errors/app-error.js';
import { DATABASE_RETRY_AFTER_S } from '../../common/filters/all-exceptions.filter.js';
import { ApiErrors } from '../../common/swagger/api-errors.decorator.js';
import { DatabaseStatus } from '../../infra/database/database-status.service.js';

const HEALTH_EXAMPLE = { status: 'ok', info: { database: { status: 'up' } }, error: {}, details: { database: { status: 'up' } } };

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly database: DatabaseStatus,
  ) {}

  @Get()
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ summary: 'Liveness: the process is up', description: 'Stays 200 during a database outage: the process waits it out.' })
  @ApiOkResponse({ schema: { example: { status: 'ok', info: {}, error: {}, details: {} } } })
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({
    summary: 'Readiness: the database answers',
    description: 'A short check (one second at most) on a connection of its own, so it never waits behind request traffic.',
  })
  @ApiOkResponse({ schema: { example: HEALTH_EXAMPLE } })
  @ApiErrors(['UNAVAILABLE'])
  async ready(): Promise<HealthCheckResult> {
    if (!(await this.database.ready())) {
      throw new AppError('UNAVAILABLE', 'Not ready: the database does not answer', DATABASE_RETRY_AFTER_S);
    }
    return this.health.check([() => this.indicators.check('database').up()]);
  }
}
