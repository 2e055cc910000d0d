-- A clip's words (issue 57, "word-timed lyrics kept where a vendor gives them"): the lyrics it sings as its vendor
-- reported them (description mode: the lyrics the vendor wrote; the sandbox: the lyrics asked or written from the
-- description), its title where the vendor named it, and its lyrics timed word by word
-- ([{"word", "startS", "endS"}, ...] in seconds, in order, within the clip) where the vendor gave them. All three are null
-- for clips made before, for uploads and joined songs, and for takes whose vendor said nothing of them: readers
-- then fall back to what the task asked (its lyrics and title).
ALTER TABLE "clips"
  ADD COLUMN IF NOT EXISTS "title" VARCHAR(256),
  ADD COLUMN IF NOT EXISTS "lyrics" TEXT,
  ADD COLUMN IF NOT EXISTS "timed_lyrics" JSONB;
