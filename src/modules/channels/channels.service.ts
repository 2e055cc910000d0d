import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { FrameFit } from '../../vendors/contracts/video-request.js';
import { AppError } from '../../common/errors/app-error.js';
import { AppConfig } from '../../infra/config/app-config.js';
import { type ChannelChanges, type ChannelRecent, type ChannelRow, ChannelsRepository } from './channels.repository.js';
import { CHANNEL_OPERATIONS, configCredentialVariables, configProtocolOf, credentialRule, hasCredentials, operationsProblem } from './channel-protocols.js';
import { type ChannelModel, checkModels } from './channel-models.js';
import { billingMismatch } from './upstream-billing.js';
import type { BilledUnit } from '../../vendors/contracts/vendor-billing.js';
import { ChannelSecrets } from './channel-secrets.js';
import { ChannelTester } from './channel-tester.js';
import type { ProtocolDto } from './dto/protocol.dto.js';
import { VENDORS } from '../../vendors/registry.js';
import { type ChannelCredentialHintsDto, type ChannelCredentialsDto, type ChannelDto, type ChannelModelDto, type ChannelTestDto, type CreateChannelDto, MASK, type TaskAttemptDto, type UpdateChannelDto } from './dto/channel.dto.js';

/**
 * The admin side of channels: create, read, change, enable, disable, delete, with credentials sealed
 * (the sealing key: CHANNEL_SECRET_KEY) and answered only as their last 4 characters; and the configuration's own
 * channels (RELAY_<OP>_URL), made or updated at start.
 */
@Injectable()
export class ChannelsService implements OnModuleInit {
  private readonly logger = new Logger(ChannelsService.name);

  constructor(
    private readonly channels: ChannelsRepository,
    private readonly tester: ChannelTester,
    private readonly secrets: ChannelSecrets,
    private readonly config: AppConfig,
  ) {}

  /** Makes the configuration's channels (the start has proved that the sealing key opens the stored credentials: sealStoredSecrets). */
  async onModuleInit(): Promise<void> {
    const names: string[] = [];
    for (const operation of CHANNEL_OPERATIONS) {
      const kind = this.config.kinds[operation];
      if (!kind || kind.provider !== 'relay' || !kind.relayUrl) continue;
      const name = `${operation} (RELAY_${operation.toUpperCase()}_URL)`;
      const protocol = configProtocolOf(operation, this.config);
      names.push(name);
      await this.channels.upsertConfigChannel({
        id: randomUUID(),
        name,
        operations: [operation],
        protocol,
        baseUrl: kind.relayUrl,
        credentials: null,
        credentialsHint: JSON.stringify(configCredentialVariables(protocol, this.config)),
        weight: 100,
        priority: 0,
        maxRunning: null,
        source: 'config',
      });
    }
    await this.channels.disableConfigChannelsOtherThan(names, 'no longer configured: its RELAY_<OP>_URL is not set');
    for (const operation of CHANNEL_OPERATIONS) {
      if (this.config.kinds[operation]?.provider !== 'relay') continue;
      const usable = (await this.channels.listChannels()).filter((c) => c.status === 'enabled' && c.operations.includes(operation));
      if (usable.length === 0) this.logger.warn({ msg: `no enabled channel for ${operation}: its tasks fail at once, saying so, until one is added (POST /admin/channels) or enabled`, operation });
    }
  }

  async createChannel(dto: CreateChannelDto): Promise<ChannelDto> {
    checkName(dto.name);
    checkOperations(dto.protocol, dto.operations);
    checkCredentials(dto.protocol, dto.credentials);
    const models = checkModels(dto.protocol, dto.operations, (dto.models ?? []).map(toModel));
    try {
      const channel = await this.channels.createChannel({
        id: randomUUID(),
        name: dto.name,
        operations: [...new Set(dto.operations)],
        protocol: dto.protocol,
        baseUrl: dto.base_url.replace(/\/+$/, ''),
        credentials: this.secrets.seal(pickCredentials(dto.credentials)),
        credentialsHint: JSON.stringify(hints(dto.credentials)),
        weight: dto.weight ?? 100,
        priority: dto.priority ?? 0,
        maxRunning: dto.max_running ?? null,
        stallAfterS: dto.stall_after_s ?? null,
        frameFit: dto.frame_fit ?? null,
        source: 'admin',
        models,
      });
      this.logger.log({ msg: 'channel created', channel_id: channel.id, channel: channel.name, operations: channel.operations });
      return toDto({ ...channel, runningTasks: 0 }, undefined);
    } catch (err) {
      throw duplicateName(err, dto.name);
    }
  }

  async listChannels(): Promise<ChannelDto[]> {
    const rows = await this.channels.listChannels();
    const recent = await this.channels.recentHealth(rows.map((r) => r.id));
    return rows.map((r) => toDto(r, recent.get(r.id)));
  }

  async getChannel(id: string): Promise<ChannelDto> {
    const row = await this.existing(id);
    return toDto(row, (await this.channels.recentHealth([id])).get(id));
  }

  async updateChannel(id: string, dto: UpdateChannelDto): Promise<ChannelDto> {
    const nulls = Object.entries(dto).filter(([field, value]) => value === null && !['max_running', 'stall_after_s', 'frame_fit'].includes(field));
    if (nulls.length > 0) throw new AppError('INVALID_PARAMETER', `${nulls.map(([f]) => f).join(', ')} must not be null (leave a field out to keep it)`);
    if (dto.name !== undefined) checkName(dto.name);
    const current = await this.existing(id);
    if ((dto.base_url !== undefined || dto.protocol !== undefined || dto.credentials !== undefined) && current.runningTasks > 0) {
      throw new AppError('CONFLICT', `channel ${id} holds ${current.runningTasks} unfinished task(s), which poll it at its address with its credentials: add a new channel and disable this one instead`);
    }
    if (current.source === 'config' && (dto.credentials || dto.base_url || dto.protocol || dto.operations || dto.name)) {
      throw new AppError('CONFLICT', `channel ${id} comes from the configuration (RELAY_*): change its name, address, protocol, operations or keys there; weight, priority, max_running, stall_after_s, frame_fit and models may be changed here`);
    }
    const changes: ChannelChanges = {
      ...(dto.name !== undefined ? { name: dto.name } : {}),
      ...(dto.operations !== undefined ? { operations: [...new Set(dto.operations)] } : {}),
      ...(dto.protocol !== undefined ? { protocol: dto.protocol } : {}),
      ...(dto.base_url !== undefined ? { baseUrl: dto.base_url.replace(/\/+$/, '') } : {}),
      ...(dto.weight !== undefined ? { weight: dto.weight } : {}),
      ...(dto.priority !== undefined ? { priority: dto.priority } : {}),
      ...(dto.max_running !== undefined ? { maxRunning: dto.max_running } : {}),
      ...(dto.stall_after_s !== undefined ? { stallAfterS: dto.stall_after_s } : {}),
      ...(dto.frame_fit !== undefined ? { frameFit: dto.frame_fit } : {}),
      ...(dto.models !== undefined ? { models: dto.models.map(toModel) } : {}),
    };
    const protocol = dto.protocol ?? current.protocol;
    if (dto.protocol !== undefined || dto.operations !== undefined) checkOperations(protocol, dto.operations ?? current.operations);
    if (dto.models !== undefined || dto.protocol !== undefined || dto.operations !== undefined) {
      const checked = checkModels(protocol, dto.operations ?? current.operations, changes.models ?? (current.models as unknown as ChannelModel[]));
      if (changes.models) changes.models = checked;
    }
    if (dto.credentials) {
      checkCredentials(protocol, dto.credentials);
      changes.credentials = this.secrets.seal(pickCredentials(dto.credentials));
      changes.credentialsHint = JSON.stringify(hints(dto.credentials));
    } else if (dto.protocol && dto.protocol !== current.protocol && current.source === 'admin') {
      throw new AppError('INVALID_PARAMETER', `credentials are required when protocol changes (${current.protocol} → ${dto.protocol}): ${credentialRule(dto.protocol)}`);
    }
    try {
      await this.channels.updateChannel(id, changes);
    } catch (err) {
      throw duplicateName(err, dto.name ?? current.name);
    }
    return this.getChannel(id);
  }

  async setEnabled(id: string, enabled: boolean): Promise<ChannelDto> {
    await this.existing(id);
    // logged when its status changed: a second disable (or enable) of the same channel is no news
    if (await this.channels.setStatusByAdmin(id, enabled)) this.logger.warn({ msg: enabled ? 'channel enabled by an admin' : 'channel disabled by an admin', channel_id: id });
    return this.getChannel(id);
  }

  async testChannel(id: string): Promise<ChannelTestDto> {
    await this.existing(id);
    const result = await this.tester.test(id);
    return { ok: result.ok, status_code: result.statusCode, latency_ms: result.latencyMs, message: result.message, channel: await this.getChannel(id) };
  }

  /** The protocols a channel may speak, from the vendors' descriptors. */
  protocols(): ProtocolDto[] {
    return VENDORS.map((v) => ({
      protocol: v.protocol,
      title: v.title,
      ...(v.makes ? { makes: v.makes } : {}),
      operations: [...v.operations],
      groups: (v.groups ?? [v.operations]).map((g) => [...g]),
      credentials: [...v.credentials],
      base_url: { rule: v.baseUrl.rule, example: v.baseUrl.example },
    }));
  }

  async attemptsOf(taskId: string): Promise<TaskAttemptDto[]> {
    const rows = await this.channels.attemptsOf(taskId);
    if (!rows) throw new AppError('NOT_FOUND', `No task ${taskId}`);
    return rows.map((r) => ({
      at: r.at.toISOString(),
      outcome: r.outcome,
      channel_id: r.channel_id,
      channel: r.channel,
      message: r.message,
      latency_ms: r.latency_ms,
      model: r.model,
      upstream_id: r.upstream_id,
      cost: r.cost,
      billed_amount: r.billed_amount,
      billed_unit: r.billed_unit as BilledUnit | null,
      billed_cost: r.billed_cost,
      billing_mismatch: billingMismatch(r.cost, r.billed_cost, this.config.relay.billedCostTolerance),
    }));
  }

  async deleteChannel(id: string): Promise<ChannelDto> {
    const channel = await this.existing(id);
    const outcome = await this.channels.deleteChannel(id);
    if (outcome === 'missing') throw new AppError('NOT_FOUND', `No channel ${id}`);
    if (outcome === 'busy') throw new AppError('CONFLICT', `channel ${id} holds unfinished tasks; disable it (they finish on it), then delete it once they have ended`);
    this.logger.warn({ msg: 'channel deleted', channel_id: id, channel: channel.name });
    return toDto({ ...channel, runningTasks: 0 }, undefined);
  }

  private async existing(id: string): Promise<ChannelRow> {
    const channel = await this.channels.findChannel(id);
    if (!channel) throw new AppError('NOT_FOUND', `No channel ${id}`);
    return channel;
  }
}

/** Names with "(RELAY_" are the configuration's channels' (the upsert at start finds them by name). */
function checkName(name: string): void {
  if (/\(RELAY_/i.test(name)) throw new AppError('INVALID_PARAMETER', 'name must not contain "(RELAY_": such names belong to the channels RELAY_<OP>_URL defines');
}

function checkOperations(protocol: string, operations: readonly string[]): void {
  const problem = operationsProblem(protocol, operations);
  if (problem) throw new AppError('INVALID_PARAMETER', problem);
}

function checkCredentials(protocol: string, credentials: ChannelCredentialsDto): void {
  if (!hasCredentials(protocol, { ...credentials })) throw new AppError('INVALID_PARAMETER', `credentials: ${credentialRule(protocol)}`);
}

/** A model as stored: its names and whichever price fields it was given (per_second, per_image, per_image_by, per_billed_unit). */
function toModel(m: ChannelModelDto): ChannelModel {
  const price = m.price ? Object.fromEntries(PRICE_FIELDS.filter((f) => m.price![f] !== undefined).map((f) => [f, m.price![f]])) : undefined;
  return { name: m.name, vendor_model: m.vendor_model, ...(m.operation !== undefined ? { operation: m.operation } : {}), ...(m.spec !== undefined ? { spec: m.spec as ChannelModel['spec'] } : {}), ...(price ? { price } : {}), ...(m.voices !== undefined ? { voices: m.voices } : {}) };
}

const PRICE_FIELDS = ['per_second', 'per_image', 'per_image_by', 'per_billed_unit', 'per_1k_chars', 'per_song'] as const;

function pickCredentials(c: ChannelCredentialsDto): ChannelCredentialsDto {
  return { ...(c.access_key ? { access_key: c.access_key } : {}), ...(c.secret_key ? { secret_key: c.secret_key } : {}), ...(c.api_key ? { api_key: c.api_key } : {}) };
}

/** The last 4 characters of each secret (all of a secret shorter than 12 stays hidden). */
function hints(c: ChannelCredentialsDto): ChannelCredentialHintsDto {
  const hint = (value: string) => (value.length >= 12 ? `${MASK}${value.slice(-4)}` : MASK);
  return Object.fromEntries(Object.entries(pickCredentials(c)).map(([k, v]) => [k, hint(v as string)]));
}

function duplicateName(err: unknown, name: string): unknown {
  const code = (err as { code?: string }).code;
  return code === 'P2002' || /23505|unique/i.test(String((err as Error).message)) ? new AppError('CONFLICT', `a channel named "${name}" exists already`) : err;
}

function toDto(c: ChannelRow, recent: ChannelRecent | undefined): ChannelDto {
  const circuitOpen = c.circuitState !== 'closed';
  return {
    id: c.id,
    name: c.name,
    operations: c.operations,
    protocol: c.protocol,
    base_url: c.baseUrl,
    credentials: c.credentialsHint ? (JSON.parse(c.credentialsHint) as ChannelCredentialHintsDto) : {},
    weight: c.weight,
    priority: c.priority,
    max_running: c.maxRunning,
    stall_after_s: c.stallAfterS,
    frame_fit: (c.frameFit as FrameFit | null) ?? null,
    models: Array.isArray(c.models) ? (c.models as unknown as ChannelModel[]) : [],
    status: c.status,
    status_reason: c.statusReason,
    source: c.source,
    running_tasks: c.runningTasks,
    last_error: c.lastError,
    last_error_at: c.lastErrorAt?.toISOString() ?? null,
    circuit_state: c.circuitState,
    circuit_open_until: c.circuitOpenUntil?.toISOString() ?? null,
    consecutive_failures: c.consecutiveFailures,
    health: {
      state: c.circuitState,
      open_until: circuitOpen ? (c.circuitOpenUntil?.toISOString() ?? null) : null,
      consecutive_failures: c.consecutiveFailures,
      requests_5m: recent?.total ?? 0,
      success_rate_5m: recent && recent.total > 0 ? Math.round((recent.ok / recent.total) * 1000) / 1000 : null,
      p50_latency_ms_5m: recent?.p50Ms ?? null,
      running_tasks: c.runningTasks,
      last_error: c.lastError,
      last_error_at: c.lastErrorAt?.toISOString() ?? null,
    },
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}

