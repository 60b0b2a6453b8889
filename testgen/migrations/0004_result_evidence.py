from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [("testgen", "0003_identities")]

    operations = [
        migrations.AddField(
            model_name="testrunresult",
            name="evidence",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="testrunresult",
            name="severity",
            field=models.CharField(blank=True, default="", max_length=8),
        ),
    ]
