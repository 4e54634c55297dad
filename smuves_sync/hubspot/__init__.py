"""HubSpot CMS API: content-type registry, async client, pacing, paging."""
