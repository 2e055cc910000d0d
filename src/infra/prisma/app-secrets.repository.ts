import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { SealingKeys } from '../crypto/sealing-keys.js';
import { PrismaService } from './prisma.service.js';

/** The service's own secrets (app_secrets), made once and shared by every instance, sealed at rest. */
@Injectable()
export class AppSecretsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly sealing: SealingKeys,
  ) {}

  /** The secret called `name`: 32 random bytes (base64url) made by whichever instance asks first. */
  async findOrCreate(name: string): Promise<string> {
    await this.prisma.appSecret.createMany({ data: [{ name, value: this.sealing.seal(randomBytes(32).toString('base64url')) }], skipDuplicates: true });
    const row = await this.prisma.appSecret.findUniqueOrThrow({ where: { name } });
    // plain only on a row from before sealing that the start has not sealed yet (sealStoredSecrets)
    return row.value ? this.sealing.open(row.value) : row.plainValue!;
  }
}
