"""List prices the cost model uses besides GPU instances (those live in the catalog).

US East (N. Virginia) list prices, as published on each service's AWS pricing page;
planning numbers, not a quote. Other regions differ by a few per cent for these services.
"""

PRICES_AS_OF = "2025-06"
SOURCE = "AWS pricing pages (aws.amazon.com/<service>/pricing), us-east-1 list prices"

S3_STANDARD_GB_MONTH = 0.023
S3_STANDARD_IA_GB_MONTH = 0.0125
S3_GLACIER_IR_GB_MONTH = 0.004
KMS_KEY_MONTH = 1.00
CLOUDWATCH_LOGS_INGEST_GB = 0.50
CLOUDWATCH_LOGS_STORE_GB_MONTH = 0.03
CLOUDWATCH_ALARM_MONTH = 0.10
CLOUDWATCH_DASHBOARD_MONTH = 3.00
NAT_GATEWAY_HOUR = 0.045
VPC_INTERFACE_ENDPOINT_HOUR_PER_AZ = 0.01
ALB_HOUR = 0.0225
ALB_LCU_HOUR = 0.008
WAF_WEB_ACL_MONTH = 5.00
WAF_RULE_MONTH = 1.00
WAF_PER_MILLION_REQUESTS = 0.60
ECR_GB_MONTH = 0.10
GP3_GB_MONTH = 0.08
# aws.Network: NAT data processing, and public IPv4 (billed since 2024-02, also on the
# address of every NAT gateway).
NAT_GATEWAY_PER_GB = 0.045
PUBLIC_IPV4_HOUR = 0.005
# SageMaker Studio JupyterLab / Code Editor on ml.t3.medium, per instance-hour
# (aws.amazon.com/sagemaker/pricing, On-Demand, "Studio" / notebook instances tab).
SAGEMAKER_ML_T3_MEDIUM_HOUR = 0.05
