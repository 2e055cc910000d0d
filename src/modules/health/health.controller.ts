import { Controller, Get, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult, PrismaHealthIndicator } from '@nestjs/terminus';
import { Public } from '../../common/decorators/auth.decorators.js';
import { AppError } from '../../common/errors/app-error.js';
import { ApiErrors } from '../../common/swagger/api-errors.decorator.js';
import { PrismaService } from '../../infra/prisma/prisma.service.js';

const HEALTH_EXAMPLE = { status: 'ok', info: { database: { status: 'up' } }, error: {}, details: { database: { status: 'up' } } };

@ApiTags('health')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly prismaIndicator: PrismaHealthIndicator,
    private readonly prisma: PrismaService,
  ) {}

  @Get()
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ summary: 'Liveness: the process is up' })
  @ApiOkResponse({ schema: { example: { status: 'ok', info: {}, error: {}, details: {} } } })
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({ summary: 'Readiness: the database answers' })
  @ApiOkResponse({ schema: { example: HEALTH_EXAMPLE } })
  @ApiErrors(['UNAVAILABLE'])
  async ready(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([() => this.prismaIndicator.pingCheck('database', this.prisma).withTimeout(2000)]);
    } catch (err) {
      if (err instanceof ServiceUnavailableException) {
        throw new AppError('UNAVAILABLE', 'Not ready: the database does not answer');
      }
      throw err;
    }
  }
}
