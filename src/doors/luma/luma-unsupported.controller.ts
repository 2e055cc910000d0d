import { Controller } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { refuseRoutes, type UnsupportedRoute } from '../../common/http/unsupported-routes.js';

/** Luma's operations this gateway does not offer, by route, with what they are. */
export const LUMA_UNSUPPORTED: UnsupportedRoute[] = [
  { method: 'POST', path: 'generations/image', operation: 'image generation (client.generations.image.create)' },
  { method: 'POST', path: 'generations/image/reframe', operation: 'image reframe (client.generations.image.reframe)' },
  { method: 'POST', path: 'generations/video/modify', operation: 'video modify (client.generations.video.modify)' },
  { method: 'POST', path: 'generations/video/reframe', operation: 'video reframe (client.generations.video.reframe)' },
  { method: 'GET', path: 'generations/concepts/list', operation: 'the list of concepts (client.generations.concepts.list)' },
  { method: 'POST', path: 'generations/:id/upscale', operation: 'upscale (client.generations.upscale)' },
  { method: 'POST', path: 'generations/:id/audio', operation: 'adding audio (client.generations.audio)' },
];

/**
 * Luma's routes that this gateway does not implement answer with code 1207 (not_supported) and a
 * message naming the operation, so an SDK user is not left with a "no route" indistinguishable from a
 * typo. Keyed like every Luma route; not in the OpenAPI document (it is not part of this API). One
 * handler per row of LUMA_UNSUPPORTED, made from the table.
 */
@ApiExcludeController()
@Controller('video-b/v1')
export class LumaUnsupportedController {}

refuseRoutes(LumaUnsupportedController, LUMA_UNSUPPORTED, (route) => `Luma's ${route.operation} is not supported by this gateway: it offers video generations (create, get, list, delete), ping and credits`);
