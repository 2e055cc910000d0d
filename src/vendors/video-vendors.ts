import { VeoVideoVendor } from './google/veo-video.vendor.js';
import { KlingVideoVendor } from './kling/kling-video.vendor.js';
import { LumaVendor } from './luma/luma-video.vendor.js';
import { MinimaxVideoVendor } from './minimax/minimax-video.vendor.js';
import { RunwayVendor } from './runway/runway-video.vendor.js';
import { SeedanceVideoVendor } from './seedance/seedance-video.vendor.js';
import { WanVideoVendor } from './wan/wan-video.vendor.js';
import type { VideoModelSpec } from './contracts/video-request.js';

/**
 * The registry of video vendors: one adapter per channel protocol. A gateway speaking this interface's
 * Luma door is Luma's protocol (its models are Luma's names).
 */
export const VIDEO_VENDORS = [LumaVendor, KlingVideoVendor, RunwayVendor, MinimaxVideoVendor, SeedanceVideoVendor, VeoVideoVendor, WanVideoVendor] as const;

export type VideoVendorClass = (typeof VIDEO_VENDORS)[number];

/** The protocol whose adapter a gateway channel's video goes through (it speaks the Luma door). */
export const GATEWAY_VIDEO_PROTOCOL = LumaVendor.protocol;

/** The adapter class of a channel protocol for video; undefined when it has none. */
export function videoVendorOf(protocol: string): VideoVendorClass | undefined {
  return VIDEO_VENDORS.find((v) => v.protocol === (protocol === 'gateway' ? GATEWAY_VIDEO_PROTOCOL : protocol));
}

/** The models a protocol offers for video, by the vendor's ids. */
export function videoCatalogOf(protocol: string): readonly VideoModelSpec[] {
  return videoVendorOf(protocol)?.models ?? [];
}

/** What some video model makes, field by field: its durations, frame shapes and `<aspect ratio>@<resolution>` pairs. */
export interface VideoCatalogRange {
  durations: number[];
  aspectRatios: string[];
  shapes: string[];
}

/**
 * What the vendors' video models make (one protocol's, or every protocol's), read from their catalogs: the
 * values the doors' Swagger descriptions name. Not an enumeration of what a door takes: a channel may declare
 * a model the catalogs do not know (its `models[].spec`), which may make a duration or shape none of them
 * makes, so a door's field takes any well-formed value and the configured models' check (VideoModels) refuses,
 * naming the field, what no configured model makes (the sandbox, whose models are the catalogs, takes exactly
 * these; a relay takes those its channels' models make).
 */
export function videoCatalogRange(protocol?: string): VideoCatalogRange {
  const models = protocol === undefined ? VIDEO_VENDORS.flatMap((v) => [...v.models]) : videoCatalogOf(protocol);
  const durations = new Set<number>();
  const aspectRatios = new Set<string>();
  const shapes = new Set<string>();
  for (const model of models) {
    for (const s of model.durations) durations.add(s);
    const ratios = model.aspectRatios === 'any' ? [] : model.aspectRatios;
    for (const r of ratios) aspectRatios.add(r);
    for (const shape of model.sizes ?? ratios.flatMap((r) => model.resolutions.map((res) => `${r}@${res}`))) shapes.add(shape);
  }
  return { durations: [...durations].sort((a, b) => a - b), aspectRatios: [...aspectRatios], shapes: [...shapes] };
}
