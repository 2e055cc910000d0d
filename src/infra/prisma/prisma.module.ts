import { Global, Module } from '@nestjs/common';
import { AppSecretsRepository } from './app-secrets.repository.js';
import { PrismaService } from './prisma.service.js';

@Global()
@Module({ providers: [PrismaService, AppSecretsRepository], exports: [PrismaService, AppSecretsRepository] })
export class PrismaModule {}
