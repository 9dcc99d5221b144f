# Who may send deploy/edge.vcl a PURGE: the addresses of the shop's web nodes and Celery workers
# (seckill_site.edge sends the purges), as addresses or networks ("10.0.1.0"/24). Edit the list
# here; tools/edge.py writes a copy of its own when it is given one (make partition-test).

acl purgers {
    "127.0.0.1";
    "::1";
}
