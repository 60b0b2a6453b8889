import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("inventory", "0001_initial"),
        ("testgen", "0005_inconclusive"),
    ]

    operations = [
        migrations.CreateModel(
            name="StoredTest",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("options", models.CharField(help_text="'' for automatic selection, else TYPE:VERSION.",
                                             max_length=80)),
                ("stamp", models.CharField(max_length=64)),
                ("body", models.BinaryField()),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("endpoint", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE,
                                               related_name="stored_tests", to="inventory.endpoint")),
            ],
            options={
                "constraints": [models.UniqueConstraint(fields=("endpoint", "options"), name="stored_test_unique")],
            },
        ),
    ]
