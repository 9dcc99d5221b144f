"""What a reconcile repair leaves behind: a stock audit row per repaired sale, and its count."""

from sales.models import StockChange
from sales.services import stock_audit_record
from seckill.metrics import RECONCILE_REPAIRS
from seckill.services.reconcile import ReconcileReport


def reconcile_repair_record(*, report: ReconcileReport) -> bool:
    """Audit a repair of Redis (delta 0: the database stock, which the log adds up to, is the
    truth the repair copied); True when the report repaired anything."""
    if report.after is not None and report.before is not None:
        before, after = report.before, report.after
        stock_audit_record(
            sale_id=report.sale_id,
            delta=0,
            reason=StockChange.RECONCILE_REPAIR,
            detail={
                "stock_before": before.previous_stock,
                "stock_after": after.stock,
                "buyers_before": before.previous_buyers,
                "buyers_after": after.buyers,
            },
        )
    repaired = bool(report.finished or report.after)
    if repaired:
        RECONCILE_REPAIRS.inc()
    return repaired
