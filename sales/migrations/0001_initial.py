"""The sale and what belongs to it move here from the goods app. Their tables keep their names
(db_table), so this changes Django's picture of the models only: no SQL runs (sqlmigrate shows none),
and a rolling deploy's old processes, which still know them as goods models, read and write the
same rows."""

import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("goods", "0014_goods_names_one_line"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='Sale',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('seckill_price', models.DecimalField(decimal_places=2, max_digits=10, validators=[django.core.validators.MinValueValidator(0)], verbose_name='sale price')),
                        ('stock_count', models.IntegerField(help_text='Units still to sell in this sale.', validators=[django.core.validators.MinValueValidator(0)], verbose_name='units left')),
                        ('start_at', models.DateTimeField(verbose_name='start')),
                        ('end_at', models.DateTimeField(verbose_name='end')),
                        ('admission', models.CharField(choices=[('fcfs', 'first come, first served'), ('draw', 'draw at opening')], db_default='fcfs', default='fcfs', help_text='With a draw, shoppers who enter in the opening window are drawn at random.', max_length=8, verbose_name='admission')),
                        ('draw_window_s', models.PositiveSmallIntegerField(db_default=10, default=10, help_text='How long entries are still taken after the start, before the draw (5 to 120 seconds; 0 when entries open ahead and the draw is at the start).', validators=[django.core.validators.MinValueValidator(0), django.core.validators.MaxValueValidator(120)], verbose_name='draw window (seconds)')),
                        ('entries_open_at', models.DateTimeField(blank=True, help_text='Draw sales only: take entries from this time until the draw, ahead of the start (pre-registration). Empty: entries are taken only in the draw window after the start.', null=True, verbose_name='entries open')),
                        ('unpaid_hold_minutes', models.PositiveSmallIntegerField(db_default=30, default=30, help_text="When an order's time to pay runs out and its payment provider cannot be reached to close the payment, the unit is held this long before it goes back on sale; a payment that arrives after that is refunded.", validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(1440)], verbose_name='hold while payment is unconfirmed (minutes)')),
                        ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created')),
                        ('goods', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='sales', to='goods.goods', verbose_name='goods')),
                    ],
                    options={
                        'verbose_name': 'sale',
                        'verbose_name_plural': 'sales',
                        'db_table': 'goods_seckillgoods',
                        'ordering': ('start_at',),
                    },
                ),
                migrations.CreateModel(
                    name='SaleDraw',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('seed_nonce', models.CharField(max_length=64, verbose_name='seed nonce')),
                        ('seed_sha256', models.CharField(max_length=64, verbose_name='seed SHA-256')),
                        ('seed', models.CharField(blank=True, default='', max_length=64, verbose_name='seed')),
                        ('entrant_ids', models.JSONField(blank=True, default=list, verbose_name='entrants')),
                        ('winner_ids', models.JSONField(blank=True, default=list, verbose_name='winners')),
                        ('units', models.PositiveIntegerField(default=0, verbose_name='units drawn')),
                        ('drawn_at', models.DateTimeField(blank=True, null=True, verbose_name='drawn')),
                        ('applied_at', models.DateTimeField(blank=True, null=True, verbose_name='applied')),
                        ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created')),
                        ('sale', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='draw', to='sales.sale', verbose_name='sale')),
                    ],
                    options={
                        'verbose_name': 'draw',
                        'verbose_name_plural': 'draws',
                        'db_table': 'goods_saledraw',
                    },
                ),
                migrations.CreateModel(
                    name='SaleReminder',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='created')),
                        ('sale', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='reminders', to='sales.sale', verbose_name='sale')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='sale_reminders', to=settings.AUTH_USER_MODEL, verbose_name='user')),
                    ],
                    options={
                        'verbose_name': 'sale reminder',
                        'verbose_name_plural': 'sale reminders',
                        'db_table': 'goods_salereminder',
                    },
                ),
                migrations.CreateModel(
                    name='StockAudit',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('created_at', models.DateTimeField(auto_now_add=True, verbose_name='when')),
                        ('delta', models.IntegerField(verbose_name='change')),
                        ('reason', models.CharField(choices=[('merchant edit', 'merchant edit'), ('purchase', 'purchase'), ('cancellation', 'cancellation'), ('expiry', 'expiry'), ('reconcile repair', 'reconcile repair'), ('opening balance', 'opening balance')], max_length=24, verbose_name='reason')),
                        ('reference', models.CharField(blank=True, max_length=64, verbose_name='order number')),
                        ('detail', models.JSONField(blank=True, db_default={}, default=dict, verbose_name='detail')),
                        ('actor', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='by')),
                        ('sale', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='stock_audit', to='sales.sale', verbose_name='sale')),
                    ],
                    options={
                        'verbose_name': 'stock change',
                        'verbose_name_plural': 'stock changes',
                        'db_table': 'goods_stockaudit',
                        'ordering': ('-created_at', '-pk'),
                    },
                ),
                migrations.AddConstraint(
                    model_name='sale',
                    constraint=models.CheckConstraint(condition=models.Q(('stock_count__gte', 0)), name='seckill_stock_not_negative'),
                ),
                migrations.AddConstraint(
                    model_name='sale',
                    constraint=models.CheckConstraint(condition=models.Q(('end_at__gt', models.F('start_at'))), name='seckill_ends_after_start'),
                ),
                migrations.AddConstraint(
                    model_name='sale',
                    constraint=models.CheckConstraint(condition=models.Q(models.Q(('draw_window_s__gte', 5), ('draw_window_s__lte', 120)), models.Q(('draw_window_s', 0), ('entries_open_at__isnull', False)), _connector='OR'), name='seckill_draw_window_bounds'),
                ),
                migrations.AddConstraint(
                    model_name='sale',
                    constraint=models.CheckConstraint(condition=models.Q(('entries_open_at__isnull', True), models.Q(('admission', 'draw'), ('entries_open_at__lt', models.F('start_at'))), _connector='OR'), name='seckill_entries_open_before_start'),
                ),
                migrations.AddConstraint(
                    model_name='salereminder',
                    constraint=models.UniqueConstraint(fields=('user', 'sale'), name='one_reminder_per_user_per_sale'),
                ),
                migrations.AddIndex(
                    model_name='stockaudit',
                    index=models.Index(fields=['sale', '-created_at'], name='goods_stock_sale_id_f99bbf_idx'),
                ),
            ],
        ),
    ]
