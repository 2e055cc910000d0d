import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult, HealthIndicatorService } from '@nestjs/terminus';
import { Public } from '../../common/decorators/auth.decorators.js';
import { AppError } from '../../common/errors/app-error.js';
import { DATABASE_RETRY_AFTER_S } from '../../common/filters/all-exceptions.filter.js';
import { ApiErrors } from '../../common/swagger/api-errors.decorator.js';
import { ShutdownState } from '../../infra/process/shutdown-state.js';
import { DatabaseStatus } from '../../infra/database/database-status.service.js';

/** Terminus's health report. */
class HealthDto {
  @ApiProperty({ enum: ['ok', 'error', 'shutting_down'], example: 'ok' })
  status!: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { database: { status: 'up' } } })
  info?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: {} })
  error?: Record<string, unknown>;

  @ApiProperty({ type: 'object', additionalProperties: true, example: { database: { status: 'up' } } })
  details!: Record<string, unknown>;
}

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly database: DatabaseStatus,
    private readonly shutdown: ShutdownState,
  ) {}

  @Get()
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ operationId: 'getLiveness', summary: 'Liveness: the process is up', description: 'Stays 200 during a database outage: the process waits it out.' })
  @ApiOkResponse({ type: HealthDto })
  @ApiErrors(['INVALID_REQUEST'])
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({
    operationId: 'getReadiness',
    summary: 'Readiness: the database answers and the instance is not draining',
    description:
      'A check on a connection of its own, so it never waits behind request traffic, answered within about a second. A database that answers, however slowly, is ready; 503 when it refuses or drops the connection (a stopped database: at once) or has not answered for 10 s, and from the moment the instance receives SIGTERM, so a load balancer drains it.',
  })
  @ApiOkResponse({ type: HealthDto })
  @ApiErrors(['INVALID_REQUEST', 'UNAVAILABLE'])
  async ready(): Promise<HealthCheckResult> {
    if (this.shutdown.draining) throw new AppError('UNAVAILABLE', 'Not ready: this instance is shutting down (draining); send new work to another instance', 1);
    if (!(await this.database.ready())) {
      throw new AppError('UNAVAILABLE', 'Not ready: the database does not answer', DATABASE_RETRY_AFTER_S);
    }
    return this.health.check([() => this.indicators.check('database').up()]);
  }
}
