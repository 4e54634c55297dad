-- The rest of a blog and the site's redirects: four more content types (the members
-- BLOG_AUTHOR, BLOG_TAG, URL_REDIRECT and BLOG of ContentType), and the language group of
-- an object as a promoted column.

SET LOCAL ROLE smuves_owner;

INSERT INTO public.content_types (name)
VALUES ('blog_author'), ('blog_tag'), ('url_redirect'), ('blog');

-- HubSpot's `translatedFromId` (text in some schemas, a number in others): the id of the
-- primary object of this object's language group, NULL for a primary or an object without
-- translations. A group is its primary and every object translated from it.
ALTER TABLE public.content_items ADD COLUMN translated_from_id text;

-- Finds the translations of a primary. Partial: most objects are no translation, and their
-- NULLs would only cost every write an index entry.
CREATE INDEX content_items_translated_from_idx
    ON public.content_items (portal_id, content_type, translated_from_id)
    WHERE translated_from_id IS NOT NULL;
