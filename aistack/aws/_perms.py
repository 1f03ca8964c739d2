"""IAM action lists behind the `grant_*` verbs: named once, reviewed once.

Each list is the least an ML workload needs for that verb. Nothing here is a wildcard.
"""

S3_LIST = ("s3:ListBucket", "s3:GetBucketLocation")
S3_READ = ("s3:GetObject", "s3:GetObjectVersion", "s3:GetObjectTagging")
# Multipart uploads of large checkpoints need the abort/list-parts pair; no delete: the
# bucket is versioned and lifecycle rules retire old versions.
S3_WRITE = (
    "s3:PutObject",
    "s3:PutObjectTagging",
    "s3:AbortMultipartUpload",
    "s3:ListMultipartUploadParts",
)
S3_LIST_UPLOADS = ("s3:ListBucketMultipartUploads",)
KMS_READ = ("kms:Decrypt", "kms:DescribeKey")
# Decrypt is needed to write too: multipart uploads to SSE-KMS buckets read parts back.
KMS_WRITE = ("kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey")
ECR_PULL = (
    "ecr:BatchCheckLayerAvailability",
    "ecr:BatchGetImage",
    "ecr:GetDownloadUrlForLayer",
)
ECR_AUTH = ("ecr:GetAuthorizationToken",)
ECR_PUSH = (
    "ecr:BatchCheckLayerAvailability",
    "ecr:CompleteLayerUpload",
    "ecr:InitiateLayerUpload",
    "ecr:PutImage",
    "ecr:UploadLayerPart",
    "ecr:BatchGetImage",
    "ecr:GetDownloadUrlForLayer",
)
LOGS_WRITE = ("logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams")
