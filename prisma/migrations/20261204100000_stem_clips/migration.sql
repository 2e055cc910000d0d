-- Stems (issue 57): each stem a stems task splits from a clip is a clip of its own, of type 'stem' (its task's
-- parent_id is the clip it was made from; the stem itself continues nothing, so it starts a chain of its own).
ALTER TABLE "clips" DROP CONSTRAINT "clips_type_check";
ALTER TABLE "clips" ADD CONSTRAINT "clips_type_check" CHECK ("type" IN ('gen', 'upload', 'concat', 'stem'));
