import { defineConfig } from 'prisma/config';

// Used only by the Prisma CLI (generate, and migrate where its schema engine is available).
// The service applies prisma/migrations itself at start (src/infra/prisma/migrator.ts).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/media_gateway' },
});
