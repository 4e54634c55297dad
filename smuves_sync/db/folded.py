"""The versioned migrations the fold replaced: what a database migrated before it has recorded.

The fold rewrote the history 0001-0029 as the baseline 0001_roles and 0002_schema (the
catalog those files had made, functions apart) and moved every function into
migrations/functions/. A database whose ``schema_migrations`` holds exactly these rows is
that catalog already: `smuves_sync.db.migrations` records the baseline as applied without
running it, then applies what follows. The files themselves are kept, unchanged, in
tests/fixtures/migrations_before_fold/ for the upgrade test.
"""

from __future__ import annotations

# The baseline files that stand for the whole history below.
BASELINE_VERSIONS = (1, 2)

# (version, name, sha-256 of the file) of each migration folded.
FOLDED_HISTORY: tuple[tuple[int, str, str], ...] = (
    (1, "roles", "ca8ee42a60950235a0ebb6bdbf41c3d457789bf6178e1e11eba5e2fb93594f82"),
    (2, "schema", "f47d63db8af7c87d02bdb45e4d42031a04f8a01557a0e867032cbe134c278a2d"),
    (3, "row_level_security", "d0a17085b97483ea7bb0c68b3ce77c1e3b8179ff89651a44687c10a3124aed29"),
    (4, "queue", "41782d03bdef3330eb65e8eb2b9411551fc243514918ef18b9048a908098eecd"),
    (5, "queue_runs", "d096095a9ff002a809a025b497c85dcb2ea0d7066dc2a419cceeae4653583a8e"),
    (6, "sync_runs", "994602e478acb85aaa1083fd35971b3c0340b2514db00bba17a82ce8e65698b2"),
    (7, "operations", "115ebc1a86165f6ca5eb6e4d0891a499187efb27ef81ca0b7a7580965786dce1"),
    (8, "api", "ba92bbf80dfb9bb07619877606183577770514ace882ff0e8ebba92c1f6f4879"),
    (9, "queue_storage", "2508e40343df861db4723ae5692c24714c0a92703f713904fb9a79306f6aba8d"),
    (10, "dashboard", "924de6f2d182a83e38b13c1d54e7eb21c3df0a99cea770865a5ffde2710ceb1d"),
    (11, "more_content_types", "dd975030a7df870f76c13823ffb8cc9d3e1ceaf30d9921cbf15aaa267eee4927"),
    (12, "content_rejects", "ecafc1fe9fec5444f899f0e8d87fca07a940afbde1622643d4cef0d26deebd0a"),
    (13, "start_totals", "b06cef2fe8868540ec800c26c38e6d9ec8b7469d5ace7bbc48e3bd8c75790eb2"),
    (14, "content_versions", "6dca2c704670046fe701e63c4a5375ca444d78ad6f055b5c6cff6b653fcad90f"),
    (15, "worker_limits", "6dbc5df590ce50309b0e3fbdca140d1aca1e129e2689db79ea15673b2c87c300"),
    (16, "fleet", "8f9c1461cc3cf1c56e33932b60face4b1899f398d08ffe3272f5cf157a426ff2"),
    (17, "incremental", "146850339678fe16a136366dc11c9d03bfc8546380581e0fabd45c5085aaeef5"),
    (18, "claim_speed", "6b44b9be789b2e727684118e43ef4453ba66dba84c6f726ea86aafc647db8ada"),
    (19, "ingest_speed", "c0289237d7068a65eaffcfae649a73bf0c3e3eccadc4ea597a0d329ee68cbd03"),
    (20, "worker_leases", "f9af70c4dbe7c0306fb56153d2cdd4282f2b6e2fa7d87c26de340daf572358b0"),
    (21, "owner_fairness", "f24f7f4485c9051a124c4a08176c7fcf10cfc2c8205b3cfbcb8c2a7af59e6dcb"),
    (22, "claim_bookkeeping", "6013b89061030c7d355ba2b693f4623c28a946789bfd3c667179da9c863d3188"),
    (23, "export_paths", "eb6eda326fa9259b9d915d0d4145fe36e4029bf272522c9948de7ed4a1cf5abc"),
    (24, "least_privilege", "c9f69b56d1f2e3bba2aa67c2aa245cdeeec16ce0908bb7651f36af278feeea6b"),
    (25, "token_health", "c262533a7692e7c55edc22f475f8a1c0597ff15bb33b59724fb1a2f55ba49fb8"),
    (
        26,
        "dashboard_and_member_roles",
        "9c8490cb5f68580e2cb6b41cb94af51ad32bc807fcc9880c434e82550c15a834",
    ),
    (27, "worker_presence", "4bbac14392e24a8a4d569ce8facd43546b155f1d95802a73fa43054253cf3a3b"),
    (28, "run_failure_notes", "a8f90b514bd8143a9344dd249beaa160f6db0ed411fa853fa2d4dfb9fa31503c"),
    (29, "export_deleted", "ad33f9b522c78bb89434e4d1b395475fb33b3e7bfd769d413423e5c07d5c7f9b"),
)
