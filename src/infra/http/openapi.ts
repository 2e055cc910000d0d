import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ERROR_CODES } from '../../common/errors/app-error.js';
import { describeError } from '../../common/errors/error-catalog.js';

const DESCRIPTION = `
An HTTP/JSON gateway for generative media: image expansion (outpainting), video generation and audio clip upload.

**Authentication.** Every operation needs \`Authorization: Bearer <API_KEY>\`. Use **Authorize** above with your key.
The admin routes take the admin key (ADMIN_API_KEY) instead.

**Errors.** Every error answer has the body \`{ "code", "message", "request_id" }\`; \`request_id\` is also in the
\`X-Request-Id\` header of every answer. On the audio route (\`/music-a/…\`), whose success reply carries a string
\`code\`, error codes are strings too.

| HTTP | code | string code | meaning |
|---|---|---|---|
${ERROR_CODES.map((c) => describeError(c))
  .map((e) => `| ${e.status} | ${e.code} | ${e.name} | ${e.meaning} |`)
  .join('\n')}
`;

/** The OpenAPI document served at /docs-json and written by `npm run openapi`. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Media Generation Gateway')
    .setDescription(DESCRIPTION)
    .setVersion('1.0.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key (mgw_…)' }, 'api-key')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'The admin key (ADMIN_API_KEY)' }, 'admin-key')
    .build();
  return SwaggerModule.createDocument(app, config);
}

export function setupSwagger(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
    customSiteTitle: 'Media Generation Gateway — API',
    swaggerOptions: { persistAuthorization: true, displayRequestDuration: true },
  });
}
