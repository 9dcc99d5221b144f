"""The waiting rooms' answers to the sales' saves and to a room's deletion, connected in
WaitingRoomConfig.ready. A room's times follow its sale's: the web nodes are told the new
start once the sale's change is committed."""

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from sales.models import Sale
from waitingroom.models import WaitingRoom
from waitingroom.room import OFF, room_write
from waitingroom.services import room_publish


@receiver(post_save, sender=Sale, dispatch_uid="waitingroom.sale_saved")
def sale_saved_publish_room(*, instance: Sale, created: bool, update_fields=None, **_kwargs) -> None:
    """A sale's start moved (sales.services.sale_update saves the fields it changed): its room,
    if it has one, is published again from the sale as committed."""
    if created or (update_fields is not None and "start_at" not in update_fields):
        return
    if WaitingRoom.objects.filter(sale_id=instance.pk).exists():
        sale_id = instance.pk
        transaction.on_commit(lambda: room_publish(sale_id=sale_id))


@receiver(post_delete, sender=WaitingRoom, dispatch_uid="waitingroom.room_deleted")
def room_deleted_unpublish(*, instance: WaitingRoom, **_kwargs) -> None:
    """A room gone with its sale (or by hand): the web nodes stop queueing for it."""
    sale_id = instance.sale_id
    transaction.on_commit(lambda: room_write(sale_id, OFF))
