"""HubSpot CMS API: content-type registry, async client, pacing, paging.

    from smuves_sync.hubspot.client import HubSpotClient
    from smuves_sync.hubspot.ratelimit import RateLimitRegistry

    limits = RateLimitRegistry()                       # one per process, shared by all clients
    async with HubSpotClient(portal_id, token, settings, limits) as client:
        total = await client.count("blog_post")
        async for page in client.pages("blog_post", cursor=saved):
            page.items                                 # ContentRecord, promoted fields + raw
            page.cursor                                # resume point after this page

`verify_portal_token(portal_id, token, settings)` asks HubSpot whether a token belongs to a
portal (account details; `account`) before anyone connects it.

Modules: registry (the content types' specs by word), client (count, pages, confirm: the
facade), transport (one request: token, budget, retries, bounded answers, the 429 mapping),
listing (full listings, counts), totals (several types' totals as a fetch starts), changes
(what changed since a moment, ids only, changed parents), confirm (objects asked about by id),
paging (after / offset / keysets), cursor (resume points), ratelimit (per-portal budgets;
lanes: their request chains; limit_headers: what the answers say of the limits), outage (HubSpot
unreachable: one state per process that every request waits on), retry (the one retry policy),
responses (bodies and typed errors), clock (injectable time). The content types themselves are
`smuves_sync.content_types.ContentType`, the records read are
`smuves_sync.content_fields.ContentRecord`. Each name is imported from the module that defines
it: the package re-exports nothing.
"""
