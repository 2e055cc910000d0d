import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { PrismaService } from './prisma.service.js';

/** The service's own secrets (app_secrets), made once and shared by every instance. */
@Injectable()
export class AppSecretsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The secret called `name`: 32 random bytes (base64url) made by whichever instance asks first. */
  async findOrCreate(name: string): Promise<string> {
    await this.prisma.appSecret.createMany({ data: [{ name, value: randomBytes(32).toString('base64url') }], skipDuplicates: true });
    return (await this.prisma.appSecret.findUniqueOrThrow({ where: { name } })).value;
  }
}
