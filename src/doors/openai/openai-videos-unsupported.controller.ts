import { Controller } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { refuseRoutes, type UnsupportedRoute } from '../../common/http/unsupported-routes.js';

/** OpenAI's video operations this gateway does not offer, by route. */
export const OPENAI_VIDEOS_UNSUPPORTED: UnsupportedRoute[] = [
  { method: 'POST', path: ':id/remix', operation: 'videos.remix' },
  { method: 'POST', path: 'edits', operation: 'videos.edit' },
  { method: 'POST', path: 'extensions', operation: 'videos.extend' },
  { method: 'POST', path: 'characters', operation: 'videos.createCharacter' },
  { method: 'GET', path: 'characters/:id', operation: 'videos.getCharacter' },
];

/**
 * OpenAI's video routes this gateway does not implement answer 404 (not_supported, in OpenAI's error shape)
 * naming the operation, as the Luma door's do; keyed like the door's other routes, not in the OpenAPI
 * document. Declared before the door's own controller, so `characters/{id}` is not read as a video id.
 */
@ApiExcludeController()
@Controller('openai/v1/videos')
export class OpenAiVideosUnsupportedController {}

refuseRoutes(OpenAiVideosUnsupportedController, OPENAI_VIDEOS_UNSUPPORTED, (route) => `${route.operation} is not supported by this gateway: its OpenAI-style door offers videos.create, retrieve, list, delete and downloadContent`);
