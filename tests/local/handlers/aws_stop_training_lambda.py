# The stop-training Lambda handler from AWS's example notebook "Amazon SageMaker Debugger -
# Reacting to CloudWatch Events from Rules" (aws/amazon-sagemaker-examples,
# sagemaker-debugger/tensorflow_action_on_rule/tf-mnist-stop-training-job.ipynb), unmodified:
# the acceptance test runs it as users would deploy it.
import json
import logging

import boto3


def lambda_handler(event, context):
    training_job_name = event.get("detail").get("TrainingJobName")
    eval_statuses = event.get("detail").get("DebugRuleEvaluationStatuses", None)

    if eval_statuses is None or len(eval_statuses) == 0:
        logging.info("Couldn't find any debug rule statuses, skipping...")
        return {"statusCode": 200, "body": json.dumps("Nothing to do")}

    client = boto3.client("sagemaker")

    for status in eval_statuses:
        if status.get("RuleEvaluationStatus") == "IssuesFound":
            logging.info(
                'Evaluation of rule configuration {} resulted in "IssuesFound". '
                "Attempting to stop training job {}".format(status.get("RuleConfigurationName"), training_job_name)
            )
            try:
                client.stop_training_job(TrainingJobName=training_job_name)
            except Exception as e:
                logging.error(f"Encountered error while trying to stop training job {training_job_name}: {e!s}")
                raise e
    return None
