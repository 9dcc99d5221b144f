"""The restore drill's shop side (lab/restore_drill/shop.py) on the test database and Redis: the
sale it puts on, the shoppers buying through the gate and the order writer, and the deletion of
its own Redis keys, which runs in the teardown and must never take another run's."""

import secrets

import pytest
from django.conf import settings

from lab.invariants import sale_check
from lab.restore_drill import shop
from lab.restore_drill.workspace import remove
from seckill_site.redis import client
from tools.net import free_port


@pytest.mark.django_db(transaction=True)
def test_shoppers_buy_through_the_gate_and_every_queued_order_is_written():
    sale_id = shop.sale_put_on(3)
    buyers = shop.shoppers_create(5, first=0)
    assert len(set(buyers)) == 5
    answers = shop.batch_buy(sale_id, buyers)
    assert sorted(answers.values()) == ["SOLD_OUT", "SOLD_OUT", "SUCCESS", "SUCCESS", "SUCCESS"]
    orders = shop.order_ids(sale_id)
    assert len(orders) == 3
    assert sale_check(sale_id=sale_id, units=3).problems() == []
    later = shop.shoppers_create(2, first=5)  # the next batch's mobiles go on after the first's
    assert not set(later) & set(buyers)


def test_the_drills_keys_are_deleted_and_no_other():
    redis = client()
    prefix = f"drill-test-{secrets.token_hex(4)}:"
    other = f"not-the-drill-{secrets.token_hex(4)}"
    redis.mset({f"{prefix}{n}": n for n in range(1200)} | {other: 1})  # more than one batch
    try:
        assert shop.redis_forget(settings.REDIS_URL, prefix) == 1200
        assert not list(redis.scan_iter(match=f"{prefix}*"))
        assert redis.get(other) == b"1"
        assert shop.redis_forget(settings.REDIS_URL, prefix) == 0
    finally:
        redis.delete(other)


def test_a_redis_that_does_not_answer_is_told_and_never_raises():
    nobody = f"redis://127.0.0.1:{free_port()}/0"
    assert shop.redis_answers(settings.REDIS_URL)
    assert not shop.redis_answers(nobody)
    assert shop.redis_forget(nobody, "drill:") == 0
    assert shop.redis_forget("not a url", "drill:") == 0


def test_the_shop_runs_with_the_drills_database_redis_prefix_and_a_broker_nobody_reads():
    env = shop.shop_env(database_url="postgres://p@127.0.0.1:15499/drill", redis_url="redis://r/9", prefix="drill:")
    assert (env["DATABASE_URL"], env["REDIS_URL"], env["REDIS_KEY_PREFIX"]) == (
        "postgres://p@127.0.0.1:15499/drill", "redis://r/9", "drill:"
    )  # fmt: skip
    assert env["CELERY_BROKER_URL"].startswith("memory://")
    assert env["DJANGO_SETTINGS_MODULE"] == shop.SETTINGS


def test_remove_takes_a_tree_a_file_or_nothing(tmp_path):
    tree = tmp_path / "tree"
    (tree / "deep").mkdir(parents=True)
    (tree / "deep" / "file").write_text("x")
    single = tmp_path / "single"
    single.write_text("x")
    for path in (tree, single, tmp_path / "never there"):
        remove(path)
        assert not path.exists()
