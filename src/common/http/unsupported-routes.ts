import { Get, Post } from '@nestjs/common';
import { AppError } from '../errors/app-error.js';
import { IgnoresBody } from './json-body.guard.js';

/** A provider's route a door does not offer, and the operation it is (for the message). */
export interface UnsupportedRoute {
  method: 'GET' | 'POST';
  path: string;
  operation: string;
}

/**
 * Gives `controller` one handler per route of the table, each answering 404 `not_supported` with
 * `message(route)`: a provider's SDK user then reads which operation is missing, not a bare "no route".
 * Whatever the body (the SDK sends OpenAI's image variations as multipart), it is not read: the answer is
 * that 404, never a refusal of the body's type or size.
 */
export function refuseRoutes(controller: { prototype: object }, routes: readonly UnsupportedRoute[], message: (route: UnsupportedRoute) => string): void {
  for (const [index, route] of routes.entries()) {
    const name = `unsupported${index}`;
    const handler = (): never => {
      throw new AppError('NOT_SUPPORTED', message(route));
    };
    Object.defineProperty(controller.prototype, name, { value: handler, writable: true, configurable: true });
    const descriptor = Object.getOwnPropertyDescriptor(controller.prototype, name)!;
    (route.method === 'GET' ? Get(route.path) : Post(route.path))(controller.prototype, name, descriptor);
    IgnoresBody()(controller.prototype, name, descriptor);
  }
}
