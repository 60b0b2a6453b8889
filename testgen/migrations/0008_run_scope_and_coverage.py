"""What runs may send (the environment's ``exclude`` and ``allowDestructive``) and each run's coverage
report (DECISIONS §8, turn 3)."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("testgen", "0007_storedtest_body_lz4"),
    ]

    operations = [
        migrations.AddField(
            model_name="testingenvironment", name="exclude",
            field=models.JSONField(blank=True, null=True, help_text="Endpoints removed from every run."),
        ),
        migrations.AddField(
            model_name="testingenvironment", name="allow_destructive",
            field=models.JSONField(blank=True, null=True,
                                   help_text="State-resetting endpoints the operator accepts as targets."),
        ),
        migrations.AddField(
            model_name="testrun", name="coverage", field=models.JSONField(blank=True, null=True),
        ),
    ]
