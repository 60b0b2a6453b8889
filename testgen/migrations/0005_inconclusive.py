from django.db import migrations, models


class Migration(migrations.Migration):
    """The INCONCLUSIVE outcome (DECISIONS §8): a result's outcome holds it; runs count it."""

    dependencies = [
        ("testgen", "0004_result_evidence"),
    ]

    operations = [
        migrations.AddField(
            model_name="testrun",
            name="num_inconclusive",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AlterField(
            model_name="testrunresult",
            name="outcome",
            field=models.CharField(
                choices=[("PASSED", "Passed"), ("FAILED", "Failed"), ("ERROR", "Error"), ("INCONCLUSIVE", "Inconclusive")],
                max_length=12,
            ),
        ),
    ]
