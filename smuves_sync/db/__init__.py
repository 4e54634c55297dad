"""The only code that runs SQL: pool, embedded server, migrations, named queries."""
