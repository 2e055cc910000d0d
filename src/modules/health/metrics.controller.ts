import { Controller, Get, Header } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MetricsReader } from '../../common/decorators/auth.decorators.js';
import { ApiErrors } from '../../common/swagger/api-errors.decorator.js';
import { ADMIN_KEY_SCHEME, METRICS_TOKEN_SCHEME } from '../../common/swagger/security-schemes.js';
import { MetricsService } from '../../infra/metrics/metrics.service.js';

@ApiTags('health')
@MetricsReader()
@ApiBearerAuth(METRICS_TOKEN_SCHEME)
@ApiBearerAuth(ADMIN_KEY_SCHEME)
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Header('content-type', 'text/plain; version=0.0.4')
  @ApiOperation({
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    description:
      'Process metrics, tasks and credits by owner and operation, upstream channels, callback deliveries. They name owners and channels, so they need `Authorization: Bearer` with the metrics token (METRICS_TOKEN: what Prometheus sends) or the admin key; served on every role, workers too. Without either configured, every request is 401.',
  })
  // the text on success only: its errors are the JSON envelope
  @ApiOkResponse({ description: 'The Prometheus text format.', content: { 'text/plain': { schema: { type: 'string', example: 'mgw_callback_deliveries_failed_total{reason="gave_up"} 0' } } } })
  @ApiErrors(['AUTH_MISSING', 'AUTH_MALFORMED', 'AUTH_FAILED', 'AUTH_THROTTLED', 'INVALID_REQUEST'])
  read(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
