-- Music's parameters document in the gateway's own words (issue 36): it was the Suno-style door's request
-- (prompt, gpt_description_prompt, tags, negative_tags, mv, make_instrumental, continue_*, task). Existing
-- music and concat tasks are rewritten to the new names; the values are unchanged. Only rows still in the
-- old shape are touched (a music row has "mv", a concat row "tags"), so the statements are safe to repeat.

UPDATE "tasks"
SET "params" = jsonb_build_object(
  'lyrics', COALESCE("params"->'prompt', 'null'::jsonb),
  'description', COALESCE("params"->'gpt_description_prompt', 'null'::jsonb),
  'style', COALESCE("params"->'tags', 'null'::jsonb),
  'avoid_style', COALESCE("params"->'negative_tags', 'null'::jsonb),
  'title', COALESCE("params"->'title', 'null'::jsonb),
  'model', "params"->'mv',
  'instrumental', COALESCE("params"->'make_instrumental', 'false'::jsonb),
  'clip_ids', "params"->'clip_ids',
  'continues', CASE
    WHEN "params"->>'continue_clip_id' IS NULL THEN 'null'::jsonb
    ELSE jsonb_build_object(
      'clip_id', "params"->'continue_clip_id',
      'at_s', COALESCE("params"->'continue_at', 'null'::jsonb),
      'from_upload', to_jsonb(COALESCE("params"->>'task', '') = 'upload_extend'),
      'upstream_clip_id', COALESCE("params"->'continue_upstream_id', 'null'::jsonb),
      'channel_id', COALESCE("params"->'continue_channel_id', 'null'::jsonb)
    )
  END
)
WHERE "kind" = 'music' AND "params" ? 'mv';

UPDATE "tasks"
SET "params" = ("params" - 'tags' - 'prompt' - 'mv') || jsonb_build_object(
  'style', COALESCE("params"->'tags', 'null'::jsonb),
  'lyrics', COALESCE("params"->'prompt', 'null'::jsonb),
  'model', COALESCE("params"->'mv', 'null'::jsonb)
)
WHERE "kind" = 'concat' AND "params" ? 'tags';
