/**
 * The base of the sample URLs in the OpenAPI examples. It is replaced, in the document each request
 * gets, by the base that request reached (or PUBLIC_BASE_URL), so Swagger UI's examples point at this
 * very service.
 */
export const EXAMPLE_BASE = 'http://localhost:3000';

/** The sample files the service serves at /samples/{name}. */
export const SAMPLE_FILES = ['keyframe.jpg', 'photo.png', 'clip.wav'] as const;
export type SampleName = (typeof SAMPLE_FILES)[number];

export function sampleUrl(name: SampleName): string {
  return `${EXAMPLE_BASE}/samples/${name}`;
}

export const SAMPLE_EXAMPLE_NOTE =
  'The examples use sample files this service serves itself (GET /samples/{name}); a task reads them without a network fetch, so the examples succeed offline.';
