-- Video's parameters document in the gateway's own words (issue 56): it was the Luma door's request (aspect_ratio,
-- duration "5s", keyframes, references, any_model, default_aspect_ratio, enhance, and Kling's negative_prompt,
-- cfg_scale, camera_control), re-read into the normalized request at every step. It is now the normalized request
-- itself (VideoRequest: prompt, negativePrompt, aspectRatio, resolution, durationS, firstFrame, lastFrame,
-- referenceImages, loop, seed, audio, model, concepts, cfgScale, cameraControl, fit), each image as stored (its
-- id, and its URL or that it was uploaded), and the door it came through (absent before: Luma's).
--
-- What the old reading left out is left out here: a model or ratio the caller did not name (any_model,
-- default_aspect_ratio), a duration not of the form "<n>s", a resolution that is empty, no concepts; a field stored
-- as JSON null is dropped (the door took null as absent). Enhance is not kept: Luma's door always asked for it and
-- the others never did, which the door now says. Only rows still in the old shape are touched (they have
-- "keyframes"), so the statement is safe to repeat. Media rows keep their roles (frame0, frame1, ref<i>).

CREATE FUNCTION pg_temp.mgw_video_image(image jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN image->>'type' = 'generation' THEN jsonb_build_object('type', 'generation', 'generationId', image->'generation_id')
    WHEN COALESCE((image->>'upload')::boolean, false) THEN jsonb_build_object('type', 'image', 'id', image->'id', 'upload', true)
    ELSE jsonb_build_object('type', 'image', 'id', image->'id', 'url', image->'url')
  END
$$;

UPDATE "tasks" AS t
SET "params" = (
  SELECT COALESCE(jsonb_object_agg(field.key, field.value), '{}'::jsonb)
  FROM jsonb_each(jsonb_build_object(
    'prompt', p->'prompt',
    'loop', COALESCE(p->'loop', 'false'::jsonb),
    'aspectRatio', CASE WHEN COALESCE((p->>'default_aspect_ratio')::boolean, false) THEN NULL ELSE p->'aspect_ratio' END,
    'resolution', CASE WHEN COALESCE(p->>'resolution', '') = '' THEN NULL ELSE p->'resolution' END,
    'durationS', CASE WHEN p->>'duration' ~ '^[0-9]+s$' THEN to_jsonb(substring(p->>'duration' FROM '^([0-9]+)s$')::integer) END,
    'firstFrame', (SELECT pg_temp.mgw_video_image(k) FROM jsonb_array_elements(p->'keyframes') AS k WHERE k->>'position' = 'frame0' LIMIT 1),
    'lastFrame', (SELECT pg_temp.mgw_video_image(k) FROM jsonb_array_elements(p->'keyframes') AS k WHERE k->>'position' = 'frame1' LIMIT 1),
    'referenceImages', (
      SELECT jsonb_agg(pg_temp.mgw_video_image(r || '{"type": "image"}'::jsonb) ORDER BY (r->>'index')::integer)
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p->'references') = 'array' THEN p->'references' ELSE '[]'::jsonb END) AS r
    ),
    'model', CASE WHEN COALESCE((p->>'any_model')::boolean, false) THEN NULL ELSE p->'model' END,
    'concepts', (
      SELECT jsonb_agg(c->'key' ORDER BY n)
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p->'concepts') = 'array' THEN p->'concepts' ELSE '[]'::jsonb END) WITH ORDINALITY AS c(c, n)
    ),
    'negativePrompt', p->'negative_prompt',
    'cfgScale', p->'cfg_scale',
    'cameraControl', p->'camera_control',
    'seed', p->'seed',
    'audio', p->'audio',
    'fit', p->'fit',
    'door', COALESCE(p->'door', '"luma"'::jsonb)
  )) AS field
  WHERE field.value IS NOT NULL AND field.value <> 'null'::jsonb
)
FROM (SELECT "id", "params" AS p FROM "tasks" WHERE "kind" = 'video' AND "params" ? 'keyframes') AS old
WHERE t."id" = old."id";

DROP FUNCTION pg_temp.mgw_video_image(jsonb);
