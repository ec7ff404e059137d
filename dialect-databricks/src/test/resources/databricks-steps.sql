-- createMetadata
CREATE SCHEMA IF NOT EXISTS `itersnap_metadata`;
CREATE TABLE IF NOT EXISTS `itersnap_metadata`.`itersnap_ledger` (`model` STRING NOT NULL, `sequence_value` STRING NOT NULL, `run_id` STRING NOT NULL, `applied_at` TIMESTAMP NOT NULL, `source_rows` BIGINT NOT NULL, `duplicate_rows` BIGINT NOT NULL, `inserted_rows` BIGINT NOT NULL, `updated_rows` BIGINT NOT NULL, `deleted_rows` BIGINT NOT NULL, `rejected_rows` BIGINT NOT NULL, `deletion_time` STRING, `reproduced` BOOLEAN NOT NULL, `content_hash` STRING)
USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'true');
CREATE TABLE IF NOT EXISTS `itersnap_metadata`.`itersnap_errors` (`model` STRING NOT NULL, `run_id` STRING NOT NULL, `sequence_value` STRING, `reason` STRING NOT NULL, `record` STRING, `logged_at` TIMESTAMP NOT NULL)
USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'true');
CREATE TABLE IF NOT EXISTS `itersnap_metadata`.`itersnap_columns` (`model` STRING NOT NULL, `column_name` STRING NOT NULL, `introduced_seq` STRING, `in_source` BOOLEAN NOT NULL, `dropped_after` STRING)
USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'true');
CREATE TABLE IF NOT EXISTS `itersnap_metadata`.`itersnap_targets` (`target_name` STRING NOT NULL, `model` STRING NOT NULL, `registered_at` TIMESTAMP NOT NULL, `run_id` STRING)
USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'false', 'delta.enableRowTracking' = 'false');
CREATE TABLE IF NOT EXISTS `itersnap_metadata`.`itersnap_fingerprint_formats` (`model` STRING NOT NULL, `signature` STRING NOT NULL, `definition` STRING NOT NULL)
USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'true');
CREATE TABLE IF NOT EXISTS `itersnap_metadata`.`itersnap_runs` (`run_id` STRING NOT NULL, `model` STRING NOT NULL, `operation` STRING NOT NULL, `holder` STRING, `started_at` TIMESTAMP NOT NULL, `finished_at` TIMESTAMP, `status` STRING NOT NULL, `batches_applied` INT, `late_batch` BOOLEAN, `replay_point` STRING, `error_message` STRING, `logic` STRING, `checked_through` STRING)
USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'true');
-- createHistory
CREATE SCHEMA IF NOT EXISTS `snap`;
CREATE TABLE `snap`.`customers` (`id` INT, `status` STRING, `updated_at` TIMESTAMP, `file_date` DATE, `dbt_scd_id` STRING, `dbt_updated_at` TIMESTAMP, `dbt_valid_from` TIMESTAMP, `dbt_valid_to` TIMESTAMP, `dbt_change_type` STRING, `changed_attributes` STRING, `dbt_is_deleted` BOOLEAN, `dbt_opened_seq` DATE, `dbt_closed_seq` DATE)
USING DELTA TBLPROPERTIES ('delta.enableDeletionVectors' = 'true');
-- createArchive
CREATE TABLE IF NOT EXISTS `itersnap_metadata`.`itersnap_archive_customers` (`id` INT, `status` STRING, `updated_at` TIMESTAMP, `file_date` DATE, `itersnap_del` BOOLEAN, `itersnap_reject` STRING)
USING DELTA;
CREATE TABLE IF NOT EXISTS `itersnap_metadata`.`itersnap_pending_customers` (`id` INT, `status` STRING, `updated_at` TIMESTAMP, `file_date` DATE, `itersnap_del` BOOLEAN, `itersnap_reject` STRING, `itersnap_repro` BOOLEAN, `itersnap_deltime` STRING)
USING DELTA;
-- addColumn
ALTER TABLE `snap`.`customers` ADD COLUMNS (`tier` STRING);
-- widenColumn
ALTER TABLE `snap`.`customers` ALTER COLUMN `id` TYPE BIGINT;
-- createScratch
CREATE OR REPLACE TABLE `itersnap_metadata`.`itersnap_stage_customers` (`id` INT, `status` STRING, `updated_at` TIMESTAMP, `file_date` DATE, `itersnap_del` BOOLEAN, `itersnap_reject` STRING, `itersnap_repro` BOOLEAN)
USING DELTA TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 1 hours', 'delta.logRetentionDuration' = 'interval 1 days');
CREATE OR REPLACE TABLE `itersnap_metadata`.`itersnap_batches_customers` (`file_date` DATE, `itersnap_idx` INT, `itersnap_seqtext` STRING, `itersnap_deltime` TIMESTAMP, `itersnap_recorded` BOOLEAN, `itersnap_nd` INT, `itersnap_replayed` BOOLEAN, `itersnap_nd_replayed` INT)
USING DELTA TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 1 hours', 'delta.logRetentionDuration' = 'interval 1 days');
CREATE OR REPLACE TABLE `itersnap_metadata`.`itersnap_keys_customers` (`id` INT, `itersnap_from` INT)
USING DELTA TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 1 hours', 'delta.logRetentionDuration' = 'interval 1 days');
CREATE OR REPLACE TABLE `itersnap_metadata`.`itersnap_work_customers` (`id` INT, `status` STRING, `updated_at` TIMESTAMP, `file_date` DATE, `itersnap_idx` INT, `itersnap_action` STRING, `itersnap_t` TIMESTAMP, `itersnap_tt` TIMESTAMP, `itersnap_reg` BOOLEAN, `itersnap_scc` INT, `itersnap_oidx` INT, `itersnap_upto` INT)
USING DELTA TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 1 hours', 'delta.logRetentionDuration' = 'interval 1 days');
-- discoverSequences
SELECT DISTINCT s.`file_date`
FROM (SELECT *
  FROM raw
  WHERE note <> 'x?') s;
-- fingerprintSequences
SELECT x.`itersnap_s`,
  SUM(x.`itersnap_n`),
  SUM(CAST(x.`itersnap_h` AS DECIMAL(20, 0)))
FROM (SELECT y.`itersnap_s`,
    y.`itersnap_h`,
    COUNT(*) AS `itersnap_n`
  FROM (SELECT s.`file_date` AS `itersnap_s`,
      xxhash64((COALESCE(('V' || CAST(LENGTH(CAST(s.`id` AS STRING)) AS STRING) || ':' || CAST(s.`id` AS STRING)), 'N') || COALESCE(('V' || CAST(LENGTH(CAST(s.`status` AS STRING)) AS STRING) || ':' || CAST(s.`status` AS STRING)), 'N') || COALESCE(('V' || CAST(LENGTH(CAST(s.`updated_at` AS STRING)) AS STRING) || ':' || CAST(s.`updated_at` AS STRING)), 'N') || COALESCE(('V' || CAST(LENGTH(CAST(s.`file_date` AS STRING)) AS STRING) || ':' || CAST(s.`file_date` AS STRING)), 'N'))) AS `itersnap_h`
    FROM (SELECT *
      FROM raw
      WHERE note <> 'x?') s
    WHERE s.`file_date` IN (CAST(? AS DATE))) y
  GROUP BY y.`itersnap_s`, y.`itersnap_h`) x
GROUP BY x.`itersnap_s`;
-- fingerprintStaged
SELECT x.`itersnap_s`,
  SUM(x.`itersnap_n`),
  SUM(CAST(x.`itersnap_h` AS DECIMAL(20, 0)))
FROM (SELECT y.`itersnap_s`,
    y.`itersnap_h`,
    COUNT(*) AS `itersnap_n`
  FROM (SELECT s.`file_date` AS `itersnap_s`,
      xxhash64((COALESCE(('V' || CAST(LENGTH(CAST(s.`id` AS STRING)) AS STRING) || ':' || CAST(s.`id` AS STRING)), 'N') || COALESCE(('V' || CAST(LENGTH(CAST(s.`status` AS STRING)) AS STRING) || ':' || CAST(s.`status` AS STRING)), 'N') || COALESCE(('V' || CAST(LENGTH(CAST(s.`updated_at` AS STRING)) AS STRING) || ':' || CAST(s.`updated_at` AS STRING)), 'N') || COALESCE(('V' || CAST(LENGTH(CAST(s.`file_date` AS STRING)) AS STRING) || ':' || CAST(s.`file_date` AS STRING)), 'N'))) AS `itersnap_h`
    FROM `itersnap_metadata`.`itersnap_stage_customers` s
    WHERE s.`file_date` IS NOT NULL AND NOT s.`itersnap_repro`) y
  GROUP BY y.`itersnap_s`, y.`itersnap_h`) x
GROUP BY x.`itersnap_s`;
-- historySequences
SELECT h.`dbt_opened_seq`
FROM `snap`.`customers` h
WHERE h.`dbt_opened_seq` IN (CAST(? AS DATE)) UNION
SELECT h.`dbt_opened_seq`
FROM `snap`.`customers` h
WHERE h.`dbt_opened_seq` >= CAST(? AS DATE) UNION
SELECT h.`dbt_closed_seq`
FROM `snap`.`customers` h
WHERE h.`dbt_closed_seq` IN (CAST(? AS DATE)) UNION
SELECT h.`dbt_closed_seq`
FROM `snap`.`customers` h
WHERE h.`dbt_closed_seq` >= CAST(? AS DATE);
-- stageSource
INSERT INTO `itersnap_metadata`.`itersnap_stage_customers` (`id`, `status`, `updated_at`, `file_date`, `itersnap_del`, `itersnap_reject`, `itersnap_repro`)
SELECT s.`id`,
  s.`status`,
  s.`updated_at`,
  s.`file_date`,
  CASE WHEN (op = 'D') THEN TRUE ELSE FALSE END,
  CASE WHEN s.`file_date` IS NULL THEN 'null_sequence' WHEN s.`id` IS NULL THEN 'null_key' WHEN SUM(CASE WHEN s.`itersnap_copy_no` = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY s.`file_date`, s.`id`) > 1 THEN 'duplicate_key' WHEN s.`itersnap_copy_no` > 1 THEN 'duplicate_copy' WHEN s.`updated_at` IS NULL THEN 'null_updated_at' END,
  FALSE
FROM (SELECT s0.`id`,
    s0.`status`,
    s0.`updated_at`,
    s0.`file_date`,
    ROW_NUMBER() OVER (PARTITION BY s0.`file_date`, s0.`id`, s0.`status`, s0.`updated_at` ORDER BY s0.`file_date`) AS `itersnap_copy_no`
  FROM (SELECT s0.`id`,
      s0.`status`,
      s0.`updated_at`,
      s0.`file_date`
    FROM (SELECT *
      FROM raw
      WHERE note <> 'x?') s0
    WHERE s0.`file_date` >= CAST(? AS DATE)
    UNION ALL
    SELECT s0.`id`,
      s0.`status`,
      s0.`updated_at`,
      s0.`file_date`
    FROM (SELECT *
      FROM raw
      WHERE note <> 'x?') s0
    WHERE s0.`file_date` IS NULL) s0) s;
-- logNullSequences
MERGE INTO `itersnap_metadata`.`itersnap_errors` t
USING (SELECT CAST(? AS STRING) AS `itersnap_c0`,
    CAST(? AS STRING) AS `itersnap_c1`,
    CAST(NULL AS STRING) AS `itersnap_c2`,
    'null_sequence' AS `itersnap_c3`,
    x.rec AS `itersnap_c4`,
    CAST(? AS TIMESTAMP) AS `itersnap_c5`
  FROM (SELECT to_json(named_struct('id', s.`id`, 'status', s.`status`, 'updated_at', s.`updated_at`, 'file_date', s.`file_date`), map('ignoreNullFields', 'false', 'timestampFormat', 'yyyy-MM-dd\'T\'HH:mm:ss.SSSSSSXXX', 'timestampNTZFormat', 'yyyy-MM-dd\'T\'HH:mm:ss.SSSSSS')) AS rec,
      ROW_NUMBER() OVER (PARTITION BY to_json(named_struct('id', s.`id`, 'status', s.`status`, 'updated_at', s.`updated_at`, 'file_date', s.`file_date`), map('ignoreNullFields', 'false', 'timestampFormat', 'yyyy-MM-dd\'T\'HH:mm:ss.SSSSSSXXX', 'timestampNTZFormat', 'yyyy-MM-dd\'T\'HH:mm:ss.SSSSSS')) ORDER BY to_json(named_struct('id', s.`id`, 'status', s.`status`, 'updated_at', s.`updated_at`, 'file_date', s.`file_date`), map('ignoreNullFields', 'false', 'timestampFormat', 'yyyy-MM-dd\'T\'HH:mm:ss.SSSSSSXXX', 'timestampNTZFormat', 'yyyy-MM-dd\'T\'HH:mm:ss.SSSSSS'))) AS rn
    FROM `itersnap_metadata`.`itersnap_stage_customers` s
    WHERE s.`file_date` IS NULL) x
  LEFT
  JOIN (SELECT e.`record` AS rec,
      COUNT(*) AS n
    FROM `itersnap_metadata`.`itersnap_errors` e
    WHERE e.`model` = ? AND e.`reason` = 'null_sequence'
    GROUP BY e.`record`) p ON p.rec = x.rec
  WHERE x.rn > COALESCE(p.n, 0)) d ON FALSE
WHEN NOT MATCHED THEN INSERT (`model`, `run_id`, `sequence_value`, `reason`, `record`, `logged_at`)
VALUES (d.`itersnap_c0`, d.`itersnap_c1`, d.`itersnap_c2`, d.`itersnap_c3`, d.`itersnap_c4`, d.`itersnap_c5`);
-- stageReproduced
INSERT INTO `itersnap_metadata`.`itersnap_stage_customers` (`id`, `status`, `updated_at`, `file_date`, `itersnap_del`, `itersnap_reject`, `itersnap_repro`)
SELECT itersnap_outer_h.`id`,
  NULL,
  itersnap_outer_h.`updated_at`,
  CAST(? AS DATE),
  FALSE,
  NULL,
  TRUE
FROM `snap`.`customers` itersnap_outer_h
WHERE itersnap_outer_h.`dbt_opened_seq` <= CAST(? AS DATE) AND (itersnap_outer_h.`dbt_closed_seq` IS NULL OR itersnap_outer_h.`dbt_closed_seq` > CAST(? AS DATE)) AND itersnap_outer_h.`dbt_is_deleted` = FALSE AND NOT EXISTS (SELECT 1
  FROM `itersnap_metadata`.`itersnap_archive_customers` a
  WHERE a.`file_date` = CAST(? AS DATE) AND a.`id` = itersnap_outer_h.`id`)
UNION ALL
SELECT a.`id`,
  NULL,
  a.`updated_at`,
  a.`file_date`,
  a.`itersnap_del`,
  a.`itersnap_reject`,
  TRUE
FROM `itersnap_metadata`.`itersnap_archive_customers` a
WHERE a.`file_date` = CAST(? AS DATE);
-- rollback
DELETE FROM `snap`.`customers`
WHERE `dbt_opened_seq` >= CAST(? AS DATE);
UPDATE `snap`.`customers`
SET `dbt_valid_to` = NULL, `dbt_change_type` = 'insert', `changed_attributes` = NULL, `dbt_closed_seq` = NULL
WHERE `dbt_closed_seq` >= CAST(? AS DATE);
UPDATE `snap`.`customers`
SET `status` = NULL;
DELETE FROM `itersnap_metadata`.`itersnap_archive_customers`
WHERE `file_date` >= CAST(? AS DATE);
-- listBatches
INSERT INTO `itersnap_metadata`.`itersnap_batches_customers` (`file_date`, `itersnap_idx`, `itersnap_seqtext`, `itersnap_deltime`, `itersnap_recorded`, `itersnap_replayed`, `itersnap_nd`, `itersnap_nd_replayed`)
SELECT z.`file_date`,
  z.`itersnap_idx`,
  z.`itersnap_seqtext`,
  z.`itersnap_w_dt`,
  z.`itersnap_recorded`,
  z.`itersnap_replayed`,
  z.`itersnap_w_nd`,
  z.`itersnap_w_ndr`
FROM (SELECT y.*,
    MIN(CASE WHEN y.`itersnap_w_dt` IS NOT NULL THEN y.`itersnap_idx` END) OVER (ORDER BY y.`itersnap_idx` ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS `itersnap_w_nd`,
    MIN(CASE WHEN y.`itersnap_w_dt` IS NOT NULL AND y.`itersnap_replayed` THEN y.`itersnap_idx` END) OVER (ORDER BY y.`itersnap_idx` ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS `itersnap_w_ndr`
  FROM (SELECT b.`file_date`,
      b.`itersnap_idx`,
      b.`itersnap_seqtext`,
      b.`itersnap_recorded`,
      b.`itersnap_replayed`,
      CASE WHEN b.`itersnap_recorded` OR b.`itersnap_deltime` IS NOT NULL THEN b.`itersnap_deltime` ELSE x.`itersnap_w_mu` END AS `itersnap_w_dt`
    FROM (VALUES (CAST(? AS DATE), 1, CAST(? AS STRING), CAST(? AS TIMESTAMP), FALSE, FALSE), (CAST(? AS DATE), 2, CAST(? AS STRING), CAST(? AS TIMESTAMP), FALSE, FALSE)) b (`file_date`, `itersnap_idx`, `itersnap_seqtext`, `itersnap_deltime`, `itersnap_recorded`, `itersnap_replayed`)
    LEFT
    JOIN (SELECT s.`file_date`,
        MAX(s.`updated_at`) AS `itersnap_w_mu`
      FROM `itersnap_metadata`.`itersnap_stage_customers` s
      WHERE s.`file_date` IS NOT NULL
      GROUP BY s.`file_date`) x ON x.`file_date` = b.`file_date`) y) z;
-- prepare
MERGE INTO `snap`.`customers` t
USING (SELECT *
  FROM `itersnap_metadata`.`itersnap_stage_customers` x
  WHERE x.`file_date` = CAST(? AS DATE) AND x.`itersnap_reject` IS NULL) s ON t.`id` = s.`id` AND t.`dbt_valid_to` IS NULL AND NOT (COALESCE(t.`dbt_is_deleted`, FALSE) = FALSE AND (((1 > 1 AND (t.`status` IS DISTINCT FROM s.`status`))) OR s.`itersnap_del`) AND s.`updated_at` < t.`dbt_valid_from`)
WHEN MATCHED THEN UPDATE
SET `status` = s.`status`;
INSERT INTO `itersnap_metadata`.`itersnap_keys_customers` (`id`, `itersnap_from`)
SELECT s.`id`,
  1 AS `itersnap_from`
FROM `itersnap_metadata`.`itersnap_stage_customers` s
JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date` AND b.`itersnap_idx` >= 1
LEFT
JOIN `snap`.`customers` c ON c.`id` = s.`id` AND c.`dbt_valid_to` IS NULL
WHERE NOT (s.`id` IS NULL)
GROUP BY s.`id`
UNION ALL
SELECT itersnap_outer_h.`id`,
  1
FROM `snap`.`customers` itersnap_outer_h
WHERE itersnap_outer_h.`dbt_valid_to` IS NULL AND COALESCE(itersnap_outer_h.`dbt_is_deleted`, FALSE) = FALSE AND NOT EXISTS (SELECT 1
  FROM `itersnap_metadata`.`itersnap_stage_customers` s
  JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date` AND b.`itersnap_idx` >= 1
  WHERE s.`id` = itersnap_outer_h.`id`);
-- derive
INSERT INTO `itersnap_metadata`.`itersnap_work_customers` (`id`, `status`, `updated_at`, `file_date`, `itersnap_idx`, `itersnap_action`, `itersnap_t`, `itersnap_tt`, `itersnap_reg`, `itersnap_scc`, `itersnap_oidx`, `itersnap_upto`) WITH `itersnap_q0` AS (SELECT s.`id` AS `id`,
    s.`status` AS `status`,
    s.`updated_at` AS `updated_at`,
    s.`file_date` AS `file_date`,
    b.`itersnap_idx` AS `itersnap_idx`,
    CASE WHEN s.`itersnap_del` THEN 'D' ELSE 'U' END AS `itersnap_kind`,
    CAST(NULL AS STRING) AS `itersnap_istate`,
    CAST(NULL AS TIMESTAMP) AS `itersnap_ivf`,
    CAST(NULL AS TIMESTAMP) AS `itersnap_iupd`,
    CAST(NULL AS TIMESTAMP) AS `itersnap_iend`,
    bn.`itersnap_nd` AS `itersnap_w_nd_after`
  FROM `itersnap_metadata`.`itersnap_stage_customers` s
  JOIN `itersnap_metadata`.`itersnap_keys_customers` k ON k.`id` = s.`id`
  JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date` AND b.`itersnap_idx` >= k.`itersnap_from`
  LEFT
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bn ON bn.`itersnap_idx` = b.`itersnap_idx` + 1
  WHERE s.`itersnap_reject` IS NULL
  UNION ALL
  SELECT sa.`id` AS `id`,
    CAST(NULL AS STRING) AS `status`,
    CAST(NULL AS TIMESTAMP) AS `updated_at`,
    CAST(NULL AS DATE) AS `file_date`,
    sa.`itersnap_w_ix`,
    sa.`itersnap_w_kd`,
    CAST(NULL AS STRING),
    CAST(NULL AS TIMESTAMP),
    CAST(NULL AS TIMESTAMP),
    CAST(NULL AS TIMESTAMP),
    sa.`itersnap_w_nd_after`
  FROM (SELECT DISTINCT s.`id`,
      b.`itersnap_idx` AS `itersnap_w_ix`,
      CASE WHEN s.`itersnap_reject` = 'updated_at_regression' THEN 'G' ELSE 'R' END AS `itersnap_w_kd`,
      bn.`itersnap_nd` AS `itersnap_w_nd_after`
    FROM `itersnap_metadata`.`itersnap_stage_customers` s
    JOIN `itersnap_metadata`.`itersnap_keys_customers` k ON k.`id` = s.`id`
    JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date` AND b.`itersnap_idx` >= k.`itersnap_from`
    LEFT
    JOIN `itersnap_metadata`.`itersnap_batches_customers` bn ON bn.`itersnap_idx` = b.`itersnap_idx` + 1
    WHERE s.`itersnap_reject` IN ('duplicate_key', 'null_updated_at', 'updated_at_regression')) sa
  UNION ALL
  SELECT h.`id` AS `id`,
    h.`status` AS `status`,
    h.`updated_at` AS `updated_at`,
    h.`file_date` AS `file_date`,
    0,
    'I',
    CASE WHEN COALESCE(h.`dbt_is_deleted`, FALSE) THEN 'drec' ELSE 'live' END,
    h.`dbt_valid_from`,
    h.`dbt_updated_at`,
    CAST(NULL AS TIMESTAMP),
    bn.`itersnap_nd` AS `itersnap_w_nd_after`
  FROM `itersnap_metadata`.`itersnap_keys_customers` k
  JOIN `snap`.`customers` h ON k.`id` = h.`id` AND h.`dbt_valid_to` IS NULL
  LEFT
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bn ON bn.`itersnap_idx` = k.`itersnap_from`
  UNION ALL
  SELECT itersnap_outer_h.`id` AS `id`,
    CAST(NULL AS STRING) AS `status`,
    CAST(NULL AS TIMESTAMP) AS `updated_at`,
    CAST(NULL AS DATE) AS `file_date`,
    0,
    'I',
    'closed',
    CAST(NULL AS TIMESTAMP),
    CAST(NULL AS TIMESTAMP),
    MAX(itersnap_outer_h.`dbt_valid_to`),
    MAX(bn.`itersnap_nd`)
  FROM `itersnap_metadata`.`itersnap_keys_customers` k
  JOIN `snap`.`customers` itersnap_outer_h ON k.`id` = itersnap_outer_h.`id`
  LEFT
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bn ON bn.`itersnap_idx` = k.`itersnap_from`
  WHERE NOT EXISTS (SELECT 1
    FROM `snap`.`customers` o
    WHERE o.`id` = itersnap_outer_h.`id` AND o.`dbt_valid_to` IS NULL)
  GROUP BY itersnap_outer_h.`id`), `itersnap_q1` AS (SELECT r.*,
    CASE WHEN r.`itersnap_kind` = 'U' AND LAG(r.`itersnap_kind`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) = 'U' AND LAG(r.`itersnap_idx`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) = r.`itersnap_idx` - 1 AND NOT (LAG(r.`status`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) IS DISTINCT FROM r.`status`) AND NOT (LAG(r.`updated_at`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) IS DISTINCT FROM r.`updated_at`) THEN 1 ELSE 0 END AS `itersnap_w_rp`,
    CASE WHEN r.`itersnap_kind` = 'U' AND LEAD(r.`itersnap_kind`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) = 'U' AND LEAD(r.`itersnap_idx`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) = r.`itersnap_idx` + 1 AND NOT (LEAD(r.`status`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) IS DISTINCT FROM r.`status`) AND NOT (LEAD(r.`updated_at`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) IS DISTINCT FROM r.`updated_at`) THEN 1 ELSE 0 END AS `itersnap_w_rn`
  FROM `itersnap_q0` r), `itersnap_q2` AS (SELECT k.`id`,
    k.`status`,
    k.`updated_at`,
    k.`file_date`,
    k.`itersnap_idx`,
    k.`itersnap_kind`,
    k.`itersnap_istate`,
    k.`itersnap_ivf`,
    k.`itersnap_iupd`,
    k.`itersnap_iend`,
    CASE WHEN k.`itersnap_w_rn` = 1 THEN NULL ELSE k.`itersnap_w_nd_after` END AS `itersnap_w_nd_after`,
    k.`itersnap_w_rn`
  FROM `itersnap_q1` k
  WHERE NOT (k.`itersnap_w_rp` = 1 AND k.`itersnap_w_rn` = 1)), `itersnap_q3` AS (SELECT r.*,
    LAG(r.`itersnap_w_nd_after`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) AS `itersnap_w_prev_nd`,
    LEAD(r.`itersnap_idx`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) AS `itersnap_w_next_idx`,
    CASE WHEN r.`itersnap_w_rn` = 1 THEN LEAD(r.`itersnap_idx`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) ELSE r.`itersnap_idx` + 1 END AS `itersnap_w_upto`
  FROM `itersnap_q2` r), `itersnap_q4` AS (SELECT y.*,
    SUM(CASE WHEN y.`itersnap_w_prev_nd` < y.`itersnap_idx` THEN 1 ELSE 0 END) OVER (PARTITION BY y.`id` ORDER BY y.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_g`
  FROM `itersnap_q3` y), `itersnap_q5` AS (SELECT z.*,
    MAX(CASE z.`itersnap_kind` WHEN 'U' THEN z.`itersnap_idx` * 4 + 1 WHEN 'D' THEN z.`itersnap_idx` * 4 + 2 WHEN 'I' THEN (CASE WHEN z.`itersnap_istate` = 'live' THEN 3 ELSE 0 END) END) OVER (PARTITION BY z.`id` ORDER BY z.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_pud`,
    MAX(CASE WHEN z.`itersnap_kind` IN ('U', 'D', 'I') THEN z.`itersnap_w_g` END) OVER (PARTITION BY z.`id` ORDER BY z.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_gud`
  FROM `itersnap_q4` z), `itersnap_q6` AS (SELECT v.*,
    CASE WHEN v.`itersnap_w_pud` IS NULL THEN FALSE WHEN v.`itersnap_w_g` > v.`itersnap_w_gud` THEN FALSE ELSE MOD(v.`itersnap_w_pud`, 4) IN (1, 3) END AS `itersnap_w_lb`,
    CASE v.`itersnap_kind` WHEN 'U' THEN TRUE WHEN 'D' THEN FALSE WHEN 'I' THEN v.`itersnap_istate` = 'live' ELSE CASE WHEN v.`itersnap_w_pud` IS NULL THEN FALSE WHEN v.`itersnap_w_g` > v.`itersnap_w_gud` THEN FALSE ELSE MOD(v.`itersnap_w_pud`, 4) IN (1, 3) END END AS `itersnap_w_la`,
    SUM(CASE WHEN v.`itersnap_kind` = 'U' AND NOT (CASE WHEN v.`itersnap_w_pud` IS NULL THEN FALSE WHEN v.`itersnap_w_g` > v.`itersnap_w_gud` THEN FALSE ELSE MOD(v.`itersnap_w_pud`, 4) IN (1, 3) END) THEN 1 ELSE 0 END) OVER (PARTITION BY v.`id` ORDER BY v.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_streak`,
    COUNT(CASE WHEN v.`itersnap_kind` IN ('U', 'I') THEN 1 END) OVER (PARTITION BY v.`id` ORDER BY v.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_ug`
  FROM `itersnap_q5` v), `itersnap_q7` AS (SELECT itersnap_outer_x.*,
    CASE WHEN itersnap_outer_x.`itersnap_w_la` AND itersnap_outer_x.`itersnap_w_nd_after` IS NOT NULL AND (itersnap_outer_x.`itersnap_w_next_idx` IS NULL OR itersnap_outer_x.`itersnap_w_nd_after` < itersnap_outer_x.`itersnap_w_next_idx`) THEN itersnap_outer_x.`itersnap_w_nd_after` END AS `itersnap_w_adel`,
    FIRST_VALUE(itersnap_outer_x.`status`) OVER (PARTITION BY itersnap_outer_x.`id`, itersnap_outer_x.`itersnap_w_ug` ORDER BY itersnap_outer_x.`itersnap_idx`) AS `itersnap_w_pv0`
  FROM `itersnap_q6` itersnap_outer_x), `itersnap_q8` AS (SELECT itersnap_outer_x.*,
    CASE WHEN itersnap_outer_x.`itersnap_kind` = 'I' THEN ('i' || itersnap_outer_x.`itersnap_istate`) WHEN itersnap_outer_x.`itersnap_kind` = 'U' AND NOT itersnap_outer_x.`itersnap_w_lb` THEN 'open' WHEN itersnap_outer_x.`itersnap_kind` = 'U' AND ((itersnap_outer_x.`itersnap_idx` > 1 AND (LAG(itersnap_outer_x.`itersnap_w_pv0`) OVER (PARTITION BY itersnap_outer_x.`id` ORDER BY itersnap_outer_x.`itersnap_w_ug`, itersnap_outer_x.`itersnap_idx`) IS DISTINCT FROM itersnap_outer_x.`status`))) THEN 'change' WHEN itersnap_outer_x.`itersnap_kind` = 'U' THEN 'noop' WHEN itersnap_outer_x.`itersnap_kind` = 'D' AND itersnap_outer_x.`itersnap_w_lb` THEN 'delete' WHEN itersnap_outer_x.`itersnap_kind` = 'D' THEN 'delnoop' WHEN itersnap_outer_x.`itersnap_kind` = 'G' THEN 'regr' ELSE 'present' END AS `itersnap_w_act`,
    CASE WHEN itersnap_outer_x.`itersnap_kind` = 'I' THEN (CASE WHEN itersnap_outer_x.`itersnap_istate` = 'closed' THEN itersnap_outer_x.`itersnap_iend` ELSE itersnap_outer_x.`itersnap_ivf` END) ELSE itersnap_outer_x.`updated_at` END AS `itersnap_w_t`,
    CASE WHEN itersnap_outer_x.`itersnap_w_adel` IS NOT NULL THEN (SELECT MAX(ba.`itersnap_deltime`)
    FROM `itersnap_metadata`.`itersnap_batches_customers` ba
    WHERE ba.`itersnap_idx` = itersnap_outer_x.`itersnap_w_adel`) END AS `itersnap_w_ta`
  FROM `itersnap_q7` itersnap_outer_x), `itersnap_q9` AS (SELECT s.*,
    MAX(CASE WHEN s.`itersnap_w_act` IN ('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent') THEN s.`itersnap_w_t` END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_tsc`,
    MAX(CASE WHEN s.`itersnap_w_act` IN ('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent') THEN s.`itersnap_w_t` END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_tpc`,
    MAX(s.`itersnap_w_ta`) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_tab`,
    COUNT(CASE WHEN s.`itersnap_w_act` IN ('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent') THEN 1 END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS UNBOUNDED PRECEDING) + COUNT(s.`itersnap_w_adel`) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_scc`,
    MAX(CASE WHEN s.`itersnap_w_adel` IS NOT NULL THEN s.`itersnap_w_adel` * 2 + 1 WHEN s.`itersnap_w_act` IN ('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent') THEN s.`itersnap_idx` * 2 + (CASE WHEN s.`itersnap_w_act` IN ('delete', 'idrec') THEN 1 ELSE 0 END) END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_pdel`,
    MAX(CASE WHEN s.`itersnap_w_act` IN ('open', 'change', 'ilive') THEN s.`itersnap_idx` END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_oidx`
  FROM `itersnap_q8` s), `itersnap_q10` AS (SELECT o.*,
    FIRST_VALUE(o.`status`) OVER (PARTITION BY o.`id`, o.`itersnap_w_oidx` ORDER BY o.`itersnap_w_ug`, o.`itersnap_idx`) AS `itersnap_w_ov0`,
    FIRST_VALUE(o.`updated_at`) OVER (PARTITION BY o.`id`, o.`itersnap_w_oidx` ORDER BY o.`itersnap_w_ug`, o.`itersnap_idx`) AS `itersnap_w_ov1`
  FROM `itersnap_q9` o), `itersnap_q11` AS (SELECT y.`id`,
    y.`status`,
    y.`updated_at`,
    y.`file_date`,
    y.`itersnap_idx`,
    CASE WHEN y.`itersnap_w_act` = 'open' THEN (CASE WHEN MOD(y.`itersnap_w_pdel`, 2) = 1 THEN 'return' ELSE 'insert' END) ELSE y.`itersnap_w_act` END AS `itersnap_w_action`,
    y.`itersnap_w_t`,
    CASE WHEN y.`itersnap_w_tab` IS NULL OR y.`itersnap_w_tsc` >= y.`itersnap_w_tab` THEN y.`itersnap_w_tsc` ELSE y.`itersnap_w_tab` END AS `itersnap_w_tt`,
    CASE WHEN y.`itersnap_w_act` IN ('change', 'delete') AND y.`itersnap_w_t` < CASE WHEN y.`itersnap_w_tab` IS NULL OR y.`itersnap_w_tpc` >= y.`itersnap_w_tab` THEN y.`itersnap_w_tpc` ELSE y.`itersnap_w_tab` END THEN TRUE ELSE FALSE END AS `itersnap_w_reg`,
    y.`itersnap_w_scc`,
    y.`itersnap_w_oidx`,
    y.`itersnap_w_adel`,
    y.`itersnap_w_ta`,
    y.`itersnap_w_upto`,
    CASE WHEN y.`itersnap_w_act` IN ('present', 'regr') OR (y.`itersnap_w_act` = 'noop' AND NOT ((y.`itersnap_idx` > 1 AND (y.`itersnap_w_ov0` IS DISTINCT FROM y.`status`)) OR (y.`itersnap_w_ov1` IS DISTINCT FROM y.`updated_at`))) THEN FALSE ELSE TRUE END AS `itersnap_w_kept`
  FROM `itersnap_q10` y)
SELECT v.`id`,
  CASE WHEN n.`itersnap_w_n` = 1 THEN NULL ELSE v.`status` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN NULL ELSE v.`updated_at` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN NULL ELSE v.`file_date` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN v.`itersnap_w_adel` ELSE v.`itersnap_idx` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN 'absent' ELSE v.`itersnap_w_action` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN v.`itersnap_w_ta` ELSE v.`itersnap_w_t` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN CASE WHEN v.`itersnap_w_ta` IS NULL OR v.`itersnap_w_tt` >= v.`itersnap_w_ta` THEN v.`itersnap_w_tt` ELSE v.`itersnap_w_ta` END ELSE v.`itersnap_w_tt` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN FALSE ELSE v.`itersnap_w_reg` END,
  CAST(v.`itersnap_w_scc` + n.`itersnap_w_n` AS INT),
  v.`itersnap_w_oidx`,
  v.`itersnap_w_upto`
FROM `itersnap_q11` v
JOIN (SELECT 0 AS `itersnap_w_n`
  UNION ALL
  SELECT 1 AS `itersnap_w_n`) n ON (n.`itersnap_w_n` = 0 AND v.`itersnap_w_kept`) OR (n.`itersnap_w_n` = 1 AND v.`itersnap_w_adel` IS NOT NULL);
-- counts
SELECT b.`itersnap_idx`,
  'itersnap_source_rows',
  COUNT(*),
  CAST(NULL AS TIMESTAMP)
FROM `itersnap_metadata`.`itersnap_stage_customers` s
JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date`
GROUP BY b.`itersnap_idx`
UNION ALL
SELECT b.`itersnap_idx`,
  s.`itersnap_reject`,
  COUNT(*),
  CAST(NULL AS TIMESTAMP)
FROM `itersnap_metadata`.`itersnap_stage_customers` s
JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date`
WHERE s.`itersnap_reject` IS NOT NULL
GROUP BY b.`itersnap_idx`, s.`itersnap_reject`
UNION ALL
SELECT w.`itersnap_idx`,
  w.`itersnap_action`,
  COUNT(*),
  CAST(NULL AS TIMESTAMP)
FROM `itersnap_metadata`.`itersnap_work_customers` w
WHERE w.`itersnap_action` IN ('insert', 'return', 'change', 'delete', 'absent', 'noop', 'delnoop')
GROUP BY w.`itersnap_idx`, w.`itersnap_action`
UNION ALL
SELECT 0,
  'itersnap_regressions',
  COUNT(*),
  CAST(NULL AS TIMESTAMP)
FROM `itersnap_metadata`.`itersnap_work_customers` w
WHERE w.`itersnap_reg`
UNION ALL
SELECT b.`itersnap_idx`,
  'itersnap_deletion_time',
  0,
  b.`itersnap_deltime`
FROM `itersnap_metadata`.`itersnap_batches_customers` b;
-- setAsideRegressions
MERGE INTO `itersnap_metadata`.`itersnap_stage_customers` s
USING (SELECT r.`id`,
    b.`file_date`
  FROM (SELECT w.`id`,
      MIN(w.`itersnap_idx`) AS `itersnap_w_ix`
    FROM `itersnap_metadata`.`itersnap_work_customers` w
    WHERE w.`itersnap_reg`
    GROUP BY w.`id`) r
  JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`itersnap_idx` = r.`itersnap_w_ix`) g ON s.`id` = g.`id` AND s.`file_date` = g.`file_date` AND s.`itersnap_reject` IS NULL
WHEN MATCHED THEN UPDATE
SET `itersnap_reject` = 'updated_at_regression';
DELETE FROM `itersnap_metadata`.`itersnap_work_customers`;
-- closeCurrent
MERGE INTO `snap`.`customers` t
USING (SELECT w.`id`,
    nx.`itersnap_tt` AS `itersnap_w_vt`,
    CASE WHEN nx.`itersnap_action` IN ('change', 'return') THEN 'update' ELSE 'delete' END AS `itersnap_w_ct`,
    CASE WHEN nx.`itersnap_action` IN ('change', 'return') THEN ('[' || SUBSTRING((CASE WHEN (nx.`itersnap_idx` > 1 AND (w.`status` IS DISTINCT FROM nx.`status`)) THEN ',"status"' ELSE '' END) FROM 2) || ']') END AS `itersnap_w_ca`,
    b.`file_date` AS `itersnap_w_cs`
  FROM `itersnap_metadata`.`itersnap_work_customers` w
  JOIN `itersnap_metadata`.`itersnap_work_customers` nx ON nx.`id` = w.`id` AND nx.`itersnap_scc` = w.`itersnap_scc` + 1 AND nx.`itersnap_action` IN ('ilive', 'idrec', 'iclosed', 'insert', 'return', 'change', 'delete', 'absent')
  JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`itersnap_idx` = nx.`itersnap_idx`
  WHERE w.`itersnap_action` IN ('ilive', 'idrec')) c ON t.`id` = c.`id` AND t.`dbt_valid_to` IS NULL
WHEN MATCHED THEN UPDATE
SET `dbt_valid_to` = c.`itersnap_w_vt`, `dbt_change_type` = c.`itersnap_w_ct`, `changed_attributes` = c.`itersnap_w_ca`, `dbt_closed_seq` = c.`itersnap_w_cs`;
-- insertVersions
INSERT INTO `snap`.`customers` (`id`, `status`, `updated_at`, `file_date`, `dbt_scd_id`, `dbt_updated_at`, `dbt_valid_from`, `dbt_valid_to`, `dbt_change_type`, `changed_attributes`, `dbt_is_deleted`, `dbt_opened_seq`, `dbt_closed_seq`)
SELECT w.`id`,
  w.`status`,
  w.`updated_at`,
  w.`file_date`,
  md5((COALESCE(CAST(w.`id` AS STRING), '') || '|' || COALESCE(CAST(w.`updated_at` AS STRING), '') || '|' || bo.`itersnap_seqtext`)),
  w.`updated_at`,
  w.`itersnap_tt`,
  nx.`itersnap_tt`,
  CASE WHEN nx.`itersnap_action` IS NULL THEN 'insert' WHEN nx.`itersnap_action` = 'change' THEN 'update' ELSE 'delete' END,
  CASE WHEN nx.`itersnap_action` = 'change' THEN ('[' || SUBSTRING((CASE WHEN (nx.`itersnap_idx` > 1 AND (w.`status` IS DISTINCT FROM nx.`status`)) THEN ',"status"' ELSE '' END) FROM 2) || ']') END,
  FALSE,
  bo.`file_date`,
  bc.`file_date`
FROM `itersnap_metadata`.`itersnap_work_customers` w
LEFT
JOIN `itersnap_metadata`.`itersnap_work_customers` nx ON nx.`id` = w.`id` AND nx.`itersnap_scc` = w.`itersnap_scc` + 1 AND nx.`itersnap_action` IN ('ilive', 'idrec', 'iclosed', 'insert', 'return', 'change', 'delete', 'absent')
JOIN `itersnap_metadata`.`itersnap_batches_customers` bo ON bo.`itersnap_idx` = w.`itersnap_idx`
LEFT
JOIN `itersnap_metadata`.`itersnap_batches_customers` bc ON bc.`itersnap_idx` = nx.`itersnap_idx`
WHERE w.`itersnap_action` IN ('insert', 'return', 'change')
UNION ALL
SELECT o.`id`,
  o.`status`,
  o.`updated_at`,
  o.`file_date`,
  md5((COALESCE(CAST(w.`id` AS STRING), '') || '|' || COALESCE(CAST(w.`itersnap_tt` AS STRING), '') || '|' || bo.`itersnap_seqtext` || '|deleted')),
  w.`itersnap_tt`,
  w.`itersnap_tt`,
  nx.`itersnap_tt`,
  CASE WHEN nx.`itersnap_action` IS NULL THEN 'insert' ELSE 'update' END,
  CASE WHEN nx.`itersnap_action` IS NOT NULL THEN ('[' || SUBSTRING((CASE WHEN (nx.`itersnap_idx` > 1 AND (o.`status` IS DISTINCT FROM nx.`status`)) THEN ',"status"' ELSE '' END) FROM 2) || ']') END,
  TRUE,
  bo.`file_date`,
  bc.`file_date`
FROM `itersnap_metadata`.`itersnap_work_customers` w
JOIN `itersnap_metadata`.`itersnap_work_customers` o ON o.`id` = w.`id` AND o.`itersnap_idx` = w.`itersnap_oidx`
LEFT
JOIN `itersnap_metadata`.`itersnap_work_customers` nx ON nx.`id` = w.`id` AND nx.`itersnap_scc` = w.`itersnap_scc` + 1 AND nx.`itersnap_action` IN ('ilive', 'idrec', 'iclosed', 'insert', 'return', 'change', 'delete', 'absent')
JOIN `itersnap_metadata`.`itersnap_batches_customers` bo ON bo.`itersnap_idx` = w.`itersnap_idx`
LEFT
JOIN `itersnap_metadata`.`itersnap_batches_customers` bc ON bc.`itersnap_idx` = nx.`itersnap_idx`
WHERE w.`itersnap_action` IN ('delete', 'absent');
-- writeVersions
MERGE INTO `snap`.`customers` t
USING (SELECT w.`id` AS `id`,
    w.`status` AS `status`,
    w.`updated_at` AS `updated_at`,
    w.`file_date` AS `file_date`,
    md5((COALESCE(CAST(w.`id` AS STRING), '') || '|' || COALESCE(CAST(w.`updated_at` AS STRING), '') || '|' || b.`itersnap_seqtext`)) AS `dbt_scd_id`,
    w.`updated_at` AS `dbt_updated_at`,
    w.`itersnap_tt` AS `dbt_valid_from`,
    nx.`itersnap_tt` AS `dbt_valid_to`,
    CASE WHEN nx.`itersnap_action` IN ('change', 'return') THEN 'update' ELSE 'delete' END AS `dbt_change_type`,
    CASE WHEN nx.`itersnap_action` IN ('change', 'return') THEN ('[' || SUBSTRING((CASE WHEN (nx.`itersnap_idx` > 1 AND (w.`status` IS DISTINCT FROM nx.`status`)) THEN ',"status"' ELSE '' END) FROM 2) || ']') END AS `changed_attributes`,
    FALSE AS `dbt_is_deleted`,
    b.`file_date` AS `dbt_opened_seq`,
    b.`file_date` AS `dbt_closed_seq`,
    'c' AS `itersnap_w_kind`
  FROM `itersnap_metadata`.`itersnap_work_customers` w
  JOIN `itersnap_metadata`.`itersnap_work_customers` nx ON nx.`id` = w.`id` AND nx.`itersnap_scc` = w.`itersnap_scc` + 1 AND nx.`itersnap_action` IN ('ilive', 'idrec', 'iclosed', 'insert', 'return', 'change', 'delete', 'absent')
  JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`itersnap_idx` = nx.`itersnap_idx`
  WHERE w.`itersnap_action` IN ('ilive', 'idrec')
  UNION ALL
  SELECT w.`id` AS `id`,
    w.`status` AS `status`,
    w.`updated_at` AS `updated_at`,
    w.`file_date` AS `file_date`,
    md5((COALESCE(CAST(w.`id` AS STRING), '') || '|' || COALESCE(CAST(w.`updated_at` AS STRING), '') || '|' || bo.`itersnap_seqtext`)) AS `dbt_scd_id`,
    w.`updated_at` AS `dbt_updated_at`,
    w.`itersnap_tt` AS `dbt_valid_from`,
    nx.`itersnap_tt` AS `dbt_valid_to`,
    CASE WHEN nx.`itersnap_action` IS NULL THEN 'insert' WHEN nx.`itersnap_action` = 'change' THEN 'update' ELSE 'delete' END AS `dbt_change_type`,
    CASE WHEN nx.`itersnap_action` = 'change' THEN ('[' || SUBSTRING((CASE WHEN (nx.`itersnap_idx` > 1 AND (w.`status` IS DISTINCT FROM nx.`status`)) THEN ',"status"' ELSE '' END) FROM 2) || ']') END AS `changed_attributes`,
    FALSE AS `dbt_is_deleted`,
    bo.`file_date` AS `dbt_opened_seq`,
    bc.`file_date` AS `dbt_closed_seq`,
    'i' AS `itersnap_w_kind`
  FROM `itersnap_metadata`.`itersnap_work_customers` w
  LEFT
  JOIN `itersnap_metadata`.`itersnap_work_customers` nx ON nx.`id` = w.`id` AND nx.`itersnap_scc` = w.`itersnap_scc` + 1 AND nx.`itersnap_action` IN ('ilive', 'idrec', 'iclosed', 'insert', 'return', 'change', 'delete', 'absent')
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bo ON bo.`itersnap_idx` = w.`itersnap_idx`
  LEFT
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bc ON bc.`itersnap_idx` = nx.`itersnap_idx`
  WHERE w.`itersnap_action` IN ('insert', 'return', 'change')
  UNION ALL
  SELECT o.`id` AS `id`,
    o.`status` AS `status`,
    o.`updated_at` AS `updated_at`,
    o.`file_date` AS `file_date`,
    md5((COALESCE(CAST(w.`id` AS STRING), '') || '|' || COALESCE(CAST(w.`itersnap_tt` AS STRING), '') || '|' || bo.`itersnap_seqtext` || '|deleted')) AS `dbt_scd_id`,
    w.`itersnap_tt` AS `dbt_updated_at`,
    w.`itersnap_tt` AS `dbt_valid_from`,
    nx.`itersnap_tt` AS `dbt_valid_to`,
    CASE WHEN nx.`itersnap_action` IS NULL THEN 'insert' ELSE 'update' END AS `dbt_change_type`,
    CASE WHEN nx.`itersnap_action` IS NOT NULL THEN ('[' || SUBSTRING((CASE WHEN (nx.`itersnap_idx` > 1 AND (o.`status` IS DISTINCT FROM nx.`status`)) THEN ',"status"' ELSE '' END) FROM 2) || ']') END AS `changed_attributes`,
    TRUE AS `dbt_is_deleted`,
    bo.`file_date` AS `dbt_opened_seq`,
    bc.`file_date` AS `dbt_closed_seq`,
    'i' AS `itersnap_w_kind`
  FROM `itersnap_metadata`.`itersnap_work_customers` w
  JOIN `itersnap_metadata`.`itersnap_work_customers` o ON o.`id` = w.`id` AND o.`itersnap_idx` = w.`itersnap_oidx`
  LEFT
  JOIN `itersnap_metadata`.`itersnap_work_customers` nx ON nx.`id` = w.`id` AND nx.`itersnap_scc` = w.`itersnap_scc` + 1 AND nx.`itersnap_action` IN ('ilive', 'idrec', 'iclosed', 'insert', 'return', 'change', 'delete', 'absent')
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bo ON bo.`itersnap_idx` = w.`itersnap_idx`
  LEFT
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bc ON bc.`itersnap_idx` = nx.`itersnap_idx`
  WHERE w.`itersnap_action` IN ('delete', 'absent')) c ON c.`itersnap_w_kind` = 'c' AND t.`id` = c.`id` AND t.`dbt_valid_to` IS NULL
WHEN MATCHED THEN UPDATE
SET `dbt_valid_to` = c.`dbt_valid_to`, `dbt_change_type` = c.`dbt_change_type`, `changed_attributes` = c.`changed_attributes`, `dbt_closed_seq` = c.`dbt_closed_seq`
WHEN NOT MATCHED AND c.`itersnap_w_kind` = 'i' THEN INSERT (`id`, `status`, `updated_at`, `file_date`, `dbt_scd_id`, `dbt_updated_at`, `dbt_valid_from`, `dbt_valid_to`, `dbt_change_type`, `changed_attributes`, `dbt_is_deleted`, `dbt_opened_seq`, `dbt_closed_seq`)
VALUES (c.`id`, c.`status`, c.`updated_at`, c.`file_date`, c.`dbt_scd_id`, c.`dbt_updated_at`, c.`dbt_valid_from`, c.`dbt_valid_to`, c.`dbt_change_type`, c.`changed_attributes`, c.`dbt_is_deleted`, c.`dbt_opened_seq`, c.`dbt_closed_seq`);
-- logRejected
INSERT INTO `itersnap_metadata`.`itersnap_errors` (`model`, `run_id`, `sequence_value`, `reason`, `record`, `logged_at`)
SELECT ?,
  ?,
  b.`itersnap_seqtext`,
  s.`itersnap_reject`,
  to_json(named_struct('id', s.`id`, 'status', s.`status`, 'updated_at', s.`updated_at`, 'file_date', s.`file_date`), map('ignoreNullFields', 'false', 'timestampFormat', 'yyyy-MM-dd\'T\'HH:mm:ss.SSSSSSXXX', 'timestampNTZFormat', 'yyyy-MM-dd\'T\'HH:mm:ss.SSSSSS')),
  ?
FROM `itersnap_metadata`.`itersnap_stage_customers` s
JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date`
WHERE s.`itersnap_reject` IS NOT NULL AND s.`itersnap_reject` <> 'duplicate_copy';
-- archive
INSERT INTO `itersnap_metadata`.`itersnap_archive_customers` (`id`, `status`, `updated_at`, `file_date`, `itersnap_del`, `itersnap_reject`)
SELECT s.`id`,
  s.`status`,
  s.`updated_at`,
  s.`file_date`,
  s.`itersnap_del`,
  CASE WHEN s.`itersnap_reject` = 'updated_at_regression' THEN NULL ELSE s.`itersnap_reject` END
FROM `itersnap_metadata`.`itersnap_stage_customers` s
JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date`
WHERE s.`itersnap_reject` IS NOT NULL AND s.`itersnap_reject` <> 'duplicate_copy'
UNION ALL
SELECT w.`id`,
  w.`status`,
  w.`updated_at`,
  w.`file_date`,
  TRUE,
  CAST(NULL AS STRING)
FROM `itersnap_metadata`.`itersnap_work_customers` w
WHERE w.`itersnap_action` IN ('delete', 'delnoop')
UNION ALL
SELECT s.`id`,
  s.`status`,
  s.`updated_at`,
  s.`file_date`,
  FALSE,
  CAST(NULL AS STRING)
FROM `itersnap_metadata`.`itersnap_work_customers` w
JOIN `itersnap_metadata`.`itersnap_stage_customers` s ON s.`id` = w.`id` AND s.`itersnap_reject` IS NULL
JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date` AND b.`itersnap_idx` >= w.`itersnap_idx` AND b.`itersnap_idx` < w.`itersnap_upto`
WHERE w.`itersnap_action` = 'noop';
-- replay: stageSource
INSERT INTO `itersnap_metadata`.`itersnap_stage_customers` (`id`, `status`, `updated_at`, `file_date`, `itersnap_del`, `itersnap_reject`, `itersnap_repro`)
SELECT s.`id`,
  s.`status`,
  s.`updated_at`,
  s.`file_date`,
  CASE WHEN (op = 'D') THEN TRUE ELSE FALSE END,
  CASE WHEN s.`file_date` IS NULL THEN 'null_sequence' WHEN s.`id` IS NULL THEN 'null_key' WHEN SUM(CASE WHEN s.`itersnap_copy_no` = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY s.`file_date`, s.`id`) > 1 THEN 'duplicate_key' WHEN s.`itersnap_copy_no` > 1 THEN 'duplicate_copy' WHEN s.`updated_at` IS NULL THEN 'null_updated_at' END,
  FALSE
FROM (SELECT s0.`id`,
    s0.`status`,
    s0.`updated_at`,
    s0.`file_date`,
    ROW_NUMBER() OVER (PARTITION BY s0.`file_date`, s0.`id`, s0.`status`, s0.`updated_at` ORDER BY s0.`file_date`) AS `itersnap_copy_no`
  FROM (SELECT s0.`id`,
      s0.`status`,
      s0.`updated_at`,
      s0.`file_date`
    FROM (SELECT *
      FROM raw
      WHERE note <> 'x?') s0
    JOIN `itersnap_metadata`.`itersnap_batches_customers` sb ON sb.`file_date` = s0.`file_date` AND NOT sb.`itersnap_replayed`
    WHERE s0.`file_date` >= CAST(? AS DATE)
    UNION ALL
    SELECT s0.`id`,
      s0.`status`,
      s0.`updated_at`,
      s0.`file_date`
    FROM (SELECT *
      FROM raw
      WHERE note <> 'x?') s0
    WHERE s0.`file_date` IS NULL) s0) s;
INSERT INTO `itersnap_metadata`.`itersnap_stage_customers` (`id`, `status`, `updated_at`, `file_date`, `itersnap_del`, `itersnap_reject`, `itersnap_repro`)
SELECT s.`id`,
  s.`status`,
  s.`updated_at`,
  s.`file_date`,
  CASE WHEN (op = 'D') THEN TRUE ELSE FALSE END,
  CASE WHEN s.`file_date` IS NULL THEN 'null_sequence' WHEN s.`id` IS NULL THEN 'null_key' WHEN SUM(CASE WHEN s.`itersnap_copy_no` = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY s.`file_date`, s.`id`) > 1 THEN 'duplicate_key' WHEN s.`itersnap_copy_no` > 1 THEN 'duplicate_copy' WHEN s.`updated_at` IS NULL THEN 'null_updated_at' END,
  FALSE
FROM (SELECT s0.`id`,
    s0.`status`,
    s0.`updated_at`,
    s0.`file_date`,
    ROW_NUMBER() OVER (PARTITION BY s0.`file_date`, s0.`id`, s0.`status`, s0.`updated_at` ORDER BY s0.`file_date`) AS `itersnap_copy_no`
  FROM (SELECT *
    FROM raw
    WHERE note <> 'x?') s0
  JOIN `itersnap_metadata`.`itersnap_batches_customers` sb ON sb.`file_date` = s0.`file_date` AND sb.`itersnap_replayed`
  JOIN `itersnap_metadata`.`itersnap_keys_customers` sk ON sk.`id` = s0.`id` AND sk.`itersnap_from` = 1
  WHERE s0.`file_date` >= CAST(? AS DATE)) s;
-- replay: prepare
MERGE INTO `itersnap_metadata`.`itersnap_batches_customers` b
USING (SELECT y.*,
    MIN(CASE WHEN y.`itersnap_w_dt` IS NOT NULL THEN y.`itersnap_idx` END) OVER (ORDER BY y.`itersnap_idx` ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS `itersnap_w_nd`,
    MIN(CASE WHEN y.`itersnap_w_dt` IS NOT NULL AND y.`itersnap_replayed` THEN y.`itersnap_idx` END) OVER (ORDER BY y.`itersnap_idx` ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS `itersnap_w_ndr`
  FROM (SELECT b.`file_date`,
      b.`itersnap_idx`,
      b.`itersnap_seqtext`,
      b.`itersnap_recorded`,
      b.`itersnap_replayed`,
      CASE WHEN b.`itersnap_recorded` OR b.`itersnap_deltime` IS NOT NULL THEN b.`itersnap_deltime` ELSE x.`itersnap_w_mu` END AS `itersnap_w_dt`
    FROM `itersnap_metadata`.`itersnap_batches_customers` b
    LEFT
    JOIN (SELECT s.`file_date`,
        MAX(s.`updated_at`) AS `itersnap_w_mu`
      FROM `itersnap_metadata`.`itersnap_stage_customers` s
      WHERE s.`file_date` IS NOT NULL
      GROUP BY s.`file_date`) x ON x.`file_date` = b.`file_date`) y) z ON b.`itersnap_idx` = z.`itersnap_idx`
WHEN MATCHED THEN UPDATE
SET `itersnap_deltime` = z.`itersnap_w_dt`, `itersnap_nd` = z.`itersnap_w_nd`, `itersnap_nd_replayed` = z.`itersnap_w_ndr`;
INSERT INTO `itersnap_metadata`.`itersnap_keys_customers` (`id`, `itersnap_from`)
SELECT k.`id`,
  MIN(k.`itersnap_from`)
FROM (SELECT s.`id`,
    1 AS `itersnap_from`
  FROM `itersnap_metadata`.`itersnap_stage_customers` s
  JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date` AND b.`itersnap_idx` < 3 AND NOT b.`itersnap_replayed`
  LEFT
  JOIN (SELECT itersnap_outer_c.*,
      b0.`file_date` AS `itersnap_at`
    FROM `snap`.`customers` itersnap_outer_c
    JOIN `itersnap_metadata`.`itersnap_batches_customers` b0 ON b0.`itersnap_idx` < 3 AND NOT b0.`itersnap_replayed` AND itersnap_outer_c.`dbt_opened_seq` < b0.`file_date` AND (itersnap_outer_c.`dbt_closed_seq` IS NULL OR itersnap_outer_c.`dbt_closed_seq` > b0.`file_date`)
    WHERE EXISTS (SELECT 1
      FROM `itersnap_metadata`.`itersnap_stage_customers` s1
      JOIN `itersnap_metadata`.`itersnap_batches_customers` b1 ON b1.`file_date` = s1.`file_date` AND b1.`itersnap_idx` < 3 AND NOT b1.`itersnap_replayed`
      WHERE s1.`id` = itersnap_outer_c.`id`)) c ON c.`id` = s.`id` AND c.`itersnap_at` = b.`file_date`
  WHERE NOT (s.`id` IS NULL) AND s.`itersnap_reject` IS NULL AND (s.`itersnap_del` OR NOT (c.`id` IS NOT NULL AND COALESCE(c.`dbt_is_deleted`, FALSE) = FALSE AND NOT (c.`status` IS DISTINCT FROM s.`status`) AND NOT (c.`updated_at` IS DISTINCT FROM s.`updated_at`)))
  UNION ALL
  SELECT itersnap_outer_h.`id`,
    1
  FROM `snap`.`customers` itersnap_outer_h
  JOIN `itersnap_metadata`.`itersnap_batches_customers` itersnap_outer_b ON itersnap_outer_b.`itersnap_idx` < 3 AND NOT itersnap_outer_b.`itersnap_replayed` AND itersnap_outer_b.`itersnap_deltime` IS NOT NULL AND itersnap_outer_h.`dbt_opened_seq` < itersnap_outer_b.`file_date` AND (itersnap_outer_h.`dbt_closed_seq` IS NULL OR itersnap_outer_h.`dbt_closed_seq` > itersnap_outer_b.`file_date`)
  WHERE itersnap_outer_h.`id` IS NOT NULL AND COALESCE(itersnap_outer_h.`dbt_is_deleted`, FALSE) = FALSE AND NOT EXISTS (SELECT 1
    FROM `itersnap_metadata`.`itersnap_stage_customers` s
    WHERE s.`id` = itersnap_outer_h.`id` AND s.`file_date` = itersnap_outer_b.`file_date`)) k
GROUP BY k.`id`;
-- replay: rollback
MERGE INTO `snap`.`customers` t
USING (SELECT k.`id`
  FROM `itersnap_metadata`.`itersnap_keys_customers` k
  WHERE k.`itersnap_from` = 1) k ON t.`id` = k.`id` AND t.`dbt_opened_seq` >= CAST(? AS DATE)
WHEN MATCHED THEN DELETE;
MERGE INTO `snap`.`customers` t
USING (SELECT k.`id`
  FROM `itersnap_metadata`.`itersnap_keys_customers` k
  WHERE k.`itersnap_from` = 1) k ON t.`id` = k.`id` AND t.`dbt_closed_seq` >= CAST(? AS DATE)
WHEN MATCHED THEN UPDATE
SET `dbt_valid_to` = NULL, `dbt_change_type` = 'insert', `changed_attributes` = NULL, `dbt_closed_seq` = NULL;
MERGE INTO `itersnap_metadata`.`itersnap_archive_customers` t
USING (SELECT k.`id`
  FROM `itersnap_metadata`.`itersnap_keys_customers` k
  WHERE k.`itersnap_from` = 1) k ON t.`id` = k.`id` AND t.`file_date` >= CAST(? AS DATE)
WHEN MATCHED THEN DELETE;
MERGE INTO `itersnap_metadata`.`itersnap_errors` t
USING (SELECT DISTINCT b.`itersnap_seqtext` AS sq,
    to_json(named_struct('id', s.`id`, 'status', s.`status`, 'updated_at', s.`updated_at`, 'file_date', s.`file_date`), map('ignoreNullFields', 'false', 'timestampFormat', 'yyyy-MM-dd\'T\'HH:mm:ss.SSSSSSXXX', 'timestampNTZFormat', 'yyyy-MM-dd\'T\'HH:mm:ss.SSSSSS')) AS rec
  FROM `itersnap_metadata`.`itersnap_stage_customers` s
  JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date`
  WHERE b.`itersnap_replayed`) x ON t.`model` = ? AND t.`sequence_value` = x.sq AND t.`record` = x.rec
WHEN MATCHED THEN DELETE;
-- replay: derive before the late batches
INSERT INTO `itersnap_metadata`.`itersnap_work_customers` (`id`, `status`, `updated_at`, `file_date`, `itersnap_idx`, `itersnap_action`, `itersnap_t`, `itersnap_tt`, `itersnap_reg`, `itersnap_scc`, `itersnap_oidx`, `itersnap_upto`) WITH `itersnap_q0` AS (SELECT s.`id` AS `id`,
    s.`status` AS `status`,
    s.`updated_at` AS `updated_at`,
    s.`file_date` AS `file_date`,
    b.`itersnap_idx` AS `itersnap_idx`,
    CASE WHEN s.`itersnap_del` THEN 'D' ELSE 'U' END AS `itersnap_kind`,
    CAST(NULL AS STRING) AS `itersnap_istate`,
    CAST(NULL AS TIMESTAMP) AS `itersnap_ivf`,
    CAST(NULL AS TIMESTAMP) AS `itersnap_iupd`,
    CAST(NULL AS TIMESTAMP) AS `itersnap_iend`,
    bn.`itersnap_nd_replayed` AS `itersnap_w_nd_after`
  FROM `itersnap_metadata`.`itersnap_stage_customers` s
  JOIN `itersnap_metadata`.`itersnap_keys_customers` k ON k.`id` = s.`id` AND k.`itersnap_from` = 1
  JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date` AND b.`itersnap_replayed`
  LEFT
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bn ON bn.`itersnap_idx` = b.`itersnap_idx` + 1
  WHERE s.`itersnap_reject` IS NULL
  UNION ALL
  SELECT sa.`id` AS `id`,
    CAST(NULL AS STRING) AS `status`,
    CAST(NULL AS TIMESTAMP) AS `updated_at`,
    CAST(NULL AS DATE) AS `file_date`,
    sa.`itersnap_w_ix`,
    sa.`itersnap_w_kd`,
    CAST(NULL AS STRING),
    CAST(NULL AS TIMESTAMP),
    CAST(NULL AS TIMESTAMP),
    CAST(NULL AS TIMESTAMP),
    sa.`itersnap_w_nd_after`
  FROM (SELECT DISTINCT s.`id`,
      b.`itersnap_idx` AS `itersnap_w_ix`,
      CASE WHEN s.`itersnap_reject` = 'updated_at_regression' THEN 'G' ELSE 'R' END AS `itersnap_w_kd`,
      bn.`itersnap_nd_replayed` AS `itersnap_w_nd_after`
    FROM `itersnap_metadata`.`itersnap_stage_customers` s
    JOIN `itersnap_metadata`.`itersnap_keys_customers` k ON k.`id` = s.`id` AND k.`itersnap_from` = 1
    JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date` AND b.`itersnap_replayed`
    LEFT
    JOIN `itersnap_metadata`.`itersnap_batches_customers` bn ON bn.`itersnap_idx` = b.`itersnap_idx` + 1
    WHERE s.`itersnap_reject` IN ('duplicate_key', 'null_updated_at', 'updated_at_regression')) sa
  UNION ALL
  SELECT h.`id` AS `id`,
    h.`status` AS `status`,
    h.`updated_at` AS `updated_at`,
    h.`file_date` AS `file_date`,
    0,
    'I',
    CASE WHEN COALESCE(h.`dbt_is_deleted`, FALSE) THEN 'drec' ELSE 'live' END,
    h.`dbt_valid_from`,
    h.`dbt_updated_at`,
    CAST(NULL AS TIMESTAMP),
    bn.`itersnap_nd_replayed` AS `itersnap_w_nd_after`
  FROM `itersnap_metadata`.`itersnap_keys_customers` k
  JOIN `snap`.`customers` h ON k.`id` = h.`id` AND h.`dbt_valid_to` IS NULL
  LEFT
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bn ON bn.`itersnap_idx` = 1
  WHERE k.`itersnap_from` = 1
  UNION ALL
  SELECT itersnap_outer_h.`id` AS `id`,
    CAST(NULL AS STRING) AS `status`,
    CAST(NULL AS TIMESTAMP) AS `updated_at`,
    CAST(NULL AS DATE) AS `file_date`,
    0,
    'I',
    'closed',
    CAST(NULL AS TIMESTAMP),
    CAST(NULL AS TIMESTAMP),
    MAX(itersnap_outer_h.`dbt_valid_to`),
    MAX(bn.`itersnap_nd_replayed`)
  FROM `itersnap_metadata`.`itersnap_keys_customers` k
  JOIN `snap`.`customers` itersnap_outer_h ON k.`id` = itersnap_outer_h.`id`
  LEFT
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bn ON bn.`itersnap_idx` = 1
  WHERE k.`itersnap_from` = 1 AND NOT EXISTS (SELECT 1
    FROM `snap`.`customers` o
    WHERE o.`id` = itersnap_outer_h.`id` AND o.`dbt_valid_to` IS NULL)
  GROUP BY itersnap_outer_h.`id`), `itersnap_q1` AS (SELECT r.*,
    CASE WHEN r.`itersnap_kind` = 'U' AND LAG(r.`itersnap_kind`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) = 'U' AND LAG(r.`itersnap_idx`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) = r.`itersnap_idx` - 1 AND NOT (LAG(r.`status`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) IS DISTINCT FROM r.`status`) AND NOT (LAG(r.`updated_at`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) IS DISTINCT FROM r.`updated_at`) THEN 1 ELSE 0 END AS `itersnap_w_rp`,
    CASE WHEN r.`itersnap_kind` = 'U' AND LEAD(r.`itersnap_kind`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) = 'U' AND LEAD(r.`itersnap_idx`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) = r.`itersnap_idx` + 1 AND NOT (LEAD(r.`status`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) IS DISTINCT FROM r.`status`) AND NOT (LEAD(r.`updated_at`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) IS DISTINCT FROM r.`updated_at`) THEN 1 ELSE 0 END AS `itersnap_w_rn`
  FROM `itersnap_q0` r), `itersnap_q2` AS (SELECT k.`id`,
    k.`status`,
    k.`updated_at`,
    k.`file_date`,
    k.`itersnap_idx`,
    k.`itersnap_kind`,
    k.`itersnap_istate`,
    k.`itersnap_ivf`,
    k.`itersnap_iupd`,
    k.`itersnap_iend`,
    CASE WHEN k.`itersnap_w_rn` = 1 THEN NULL ELSE k.`itersnap_w_nd_after` END AS `itersnap_w_nd_after`,
    k.`itersnap_w_rn`
  FROM `itersnap_q1` k
  WHERE NOT (k.`itersnap_w_rp` = 1 AND k.`itersnap_w_rn` = 1)), `itersnap_q3` AS (SELECT r.*,
    LAG(r.`itersnap_w_nd_after`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) AS `itersnap_w_prev_nd`,
    LEAD(r.`itersnap_idx`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) AS `itersnap_w_next_idx`,
    CASE WHEN r.`itersnap_w_rn` = 1 THEN LEAD(r.`itersnap_idx`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) ELSE r.`itersnap_idx` + 1 END AS `itersnap_w_upto`
  FROM `itersnap_q2` r), `itersnap_q4` AS (SELECT y.*,
    SUM(CASE WHEN y.`itersnap_w_prev_nd` < y.`itersnap_idx` THEN 1 ELSE 0 END) OVER (PARTITION BY y.`id` ORDER BY y.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_g`
  FROM `itersnap_q3` y), `itersnap_q5` AS (SELECT z.*,
    MAX(CASE z.`itersnap_kind` WHEN 'U' THEN z.`itersnap_idx` * 4 + 1 WHEN 'D' THEN z.`itersnap_idx` * 4 + 2 WHEN 'I' THEN (CASE WHEN z.`itersnap_istate` = 'live' THEN 3 ELSE 0 END) END) OVER (PARTITION BY z.`id` ORDER BY z.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_pud`,
    MAX(CASE WHEN z.`itersnap_kind` IN ('U', 'D', 'I') THEN z.`itersnap_w_g` END) OVER (PARTITION BY z.`id` ORDER BY z.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_gud`
  FROM `itersnap_q4` z), `itersnap_q6` AS (SELECT v.*,
    CASE WHEN v.`itersnap_w_pud` IS NULL THEN FALSE WHEN v.`itersnap_w_g` > v.`itersnap_w_gud` THEN FALSE ELSE MOD(v.`itersnap_w_pud`, 4) IN (1, 3) END AS `itersnap_w_lb`,
    CASE v.`itersnap_kind` WHEN 'U' THEN TRUE WHEN 'D' THEN FALSE WHEN 'I' THEN v.`itersnap_istate` = 'live' ELSE CASE WHEN v.`itersnap_w_pud` IS NULL THEN FALSE WHEN v.`itersnap_w_g` > v.`itersnap_w_gud` THEN FALSE ELSE MOD(v.`itersnap_w_pud`, 4) IN (1, 3) END END AS `itersnap_w_la`,
    SUM(CASE WHEN v.`itersnap_kind` = 'U' AND NOT (CASE WHEN v.`itersnap_w_pud` IS NULL THEN FALSE WHEN v.`itersnap_w_g` > v.`itersnap_w_gud` THEN FALSE ELSE MOD(v.`itersnap_w_pud`, 4) IN (1, 3) END) THEN 1 ELSE 0 END) OVER (PARTITION BY v.`id` ORDER BY v.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_streak`,
    COUNT(CASE WHEN v.`itersnap_kind` IN ('U', 'I') THEN 1 END) OVER (PARTITION BY v.`id` ORDER BY v.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_ug`
  FROM `itersnap_q5` v), `itersnap_q7` AS (SELECT itersnap_outer_x.*,
    CASE WHEN itersnap_outer_x.`itersnap_w_la` AND itersnap_outer_x.`itersnap_w_nd_after` IS NOT NULL AND (itersnap_outer_x.`itersnap_w_next_idx` IS NULL OR itersnap_outer_x.`itersnap_w_nd_after` < itersnap_outer_x.`itersnap_w_next_idx`) THEN itersnap_outer_x.`itersnap_w_nd_after` END AS `itersnap_w_adel`,
    FIRST_VALUE(itersnap_outer_x.`status`) OVER (PARTITION BY itersnap_outer_x.`id`, itersnap_outer_x.`itersnap_w_ug` ORDER BY itersnap_outer_x.`itersnap_idx`) AS `itersnap_w_pv0`
  FROM `itersnap_q6` itersnap_outer_x), `itersnap_q8` AS (SELECT itersnap_outer_x.*,
    CASE WHEN itersnap_outer_x.`itersnap_kind` = 'I' THEN ('i' || itersnap_outer_x.`itersnap_istate`) WHEN itersnap_outer_x.`itersnap_kind` = 'U' AND NOT itersnap_outer_x.`itersnap_w_lb` THEN 'open' WHEN itersnap_outer_x.`itersnap_kind` = 'U' AND ((LAG(itersnap_outer_x.`itersnap_w_pv0`) OVER (PARTITION BY itersnap_outer_x.`id` ORDER BY itersnap_outer_x.`itersnap_w_ug`, itersnap_outer_x.`itersnap_idx`) IS DISTINCT FROM itersnap_outer_x.`status`)) THEN 'change' WHEN itersnap_outer_x.`itersnap_kind` = 'U' THEN 'noop' WHEN itersnap_outer_x.`itersnap_kind` = 'D' AND itersnap_outer_x.`itersnap_w_lb` THEN 'delete' WHEN itersnap_outer_x.`itersnap_kind` = 'D' THEN 'delnoop' WHEN itersnap_outer_x.`itersnap_kind` = 'G' THEN 'regr' ELSE 'present' END AS `itersnap_w_act`,
    CASE WHEN itersnap_outer_x.`itersnap_kind` = 'I' THEN (CASE WHEN itersnap_outer_x.`itersnap_istate` = 'closed' THEN itersnap_outer_x.`itersnap_iend` ELSE itersnap_outer_x.`itersnap_ivf` END) ELSE itersnap_outer_x.`updated_at` END AS `itersnap_w_t`,
    CASE WHEN itersnap_outer_x.`itersnap_w_adel` IS NOT NULL THEN (SELECT MAX(ba.`itersnap_deltime`)
    FROM `itersnap_metadata`.`itersnap_batches_customers` ba
    WHERE ba.`itersnap_idx` = itersnap_outer_x.`itersnap_w_adel`) END AS `itersnap_w_ta`
  FROM `itersnap_q7` itersnap_outer_x), `itersnap_q9` AS (SELECT s.*,
    MAX(CASE WHEN s.`itersnap_w_act` IN ('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent') THEN s.`itersnap_w_t` END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_tsc`,
    MAX(CASE WHEN s.`itersnap_w_act` IN ('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent') THEN s.`itersnap_w_t` END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_tpc`,
    MAX(s.`itersnap_w_ta`) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_tab`,
    COUNT(CASE WHEN s.`itersnap_w_act` IN ('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent') THEN 1 END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS UNBOUNDED PRECEDING) + COUNT(s.`itersnap_w_adel`) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_scc`,
    MAX(CASE WHEN s.`itersnap_w_adel` IS NOT NULL THEN s.`itersnap_w_adel` * 2 + 1 WHEN s.`itersnap_w_act` IN ('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent') THEN s.`itersnap_idx` * 2 + (CASE WHEN s.`itersnap_w_act` IN ('delete', 'idrec') THEN 1 ELSE 0 END) END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_pdel`,
    MAX(CASE WHEN s.`itersnap_w_act` IN ('open', 'change', 'ilive') THEN s.`itersnap_idx` END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_oidx`
  FROM `itersnap_q8` s), `itersnap_q10` AS (SELECT o.*,
    FIRST_VALUE(o.`status`) OVER (PARTITION BY o.`id`, o.`itersnap_w_oidx` ORDER BY o.`itersnap_w_ug`, o.`itersnap_idx`) AS `itersnap_w_ov0`,
    FIRST_VALUE(o.`updated_at`) OVER (PARTITION BY o.`id`, o.`itersnap_w_oidx` ORDER BY o.`itersnap_w_ug`, o.`itersnap_idx`) AS `itersnap_w_ov1`
  FROM `itersnap_q9` o), `itersnap_q11` AS (SELECT y.`id`,
    y.`status`,
    y.`updated_at`,
    y.`file_date`,
    y.`itersnap_idx`,
    CASE WHEN y.`itersnap_w_act` = 'open' THEN (CASE WHEN MOD(y.`itersnap_w_pdel`, 2) = 1 THEN 'return' ELSE 'insert' END) ELSE y.`itersnap_w_act` END AS `itersnap_w_action`,
    y.`itersnap_w_t`,
    CASE WHEN y.`itersnap_w_tab` IS NULL OR y.`itersnap_w_tsc` >= y.`itersnap_w_tab` THEN y.`itersnap_w_tsc` ELSE y.`itersnap_w_tab` END AS `itersnap_w_tt`,
    CASE WHEN y.`itersnap_w_act` IN ('change', 'delete') AND y.`itersnap_w_t` < CASE WHEN y.`itersnap_w_tab` IS NULL OR y.`itersnap_w_tpc` >= y.`itersnap_w_tab` THEN y.`itersnap_w_tpc` ELSE y.`itersnap_w_tab` END THEN TRUE ELSE FALSE END AS `itersnap_w_reg`,
    y.`itersnap_w_scc`,
    y.`itersnap_w_oidx`,
    y.`itersnap_w_adel`,
    y.`itersnap_w_ta`,
    y.`itersnap_w_upto`,
    CASE WHEN y.`itersnap_w_act` IN ('present', 'regr') OR (y.`itersnap_w_act` = 'noop' AND NOT ((y.`itersnap_w_ov0` IS DISTINCT FROM y.`status`) OR (y.`itersnap_w_ov1` IS DISTINCT FROM y.`updated_at`))) THEN FALSE ELSE TRUE END AS `itersnap_w_kept`
  FROM `itersnap_q10` y)
SELECT v.`id`,
  CASE WHEN n.`itersnap_w_n` = 1 THEN NULL ELSE v.`status` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN NULL ELSE v.`updated_at` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN NULL ELSE v.`file_date` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN v.`itersnap_w_adel` ELSE v.`itersnap_idx` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN 'absent' ELSE v.`itersnap_w_action` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN v.`itersnap_w_ta` ELSE v.`itersnap_w_t` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN CASE WHEN v.`itersnap_w_ta` IS NULL OR v.`itersnap_w_tt` >= v.`itersnap_w_ta` THEN v.`itersnap_w_tt` ELSE v.`itersnap_w_ta` END ELSE v.`itersnap_w_tt` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN FALSE ELSE v.`itersnap_w_reg` END,
  CAST(v.`itersnap_w_scc` + n.`itersnap_w_n` AS INT),
  v.`itersnap_w_oidx`,
  v.`itersnap_w_upto`
FROM `itersnap_q11` v
JOIN (SELECT 0 AS `itersnap_w_n`
  UNION ALL
  SELECT 1 AS `itersnap_w_n`) n ON (n.`itersnap_w_n` = 0 AND v.`itersnap_w_kept`) OR (n.`itersnap_w_n` = 1 AND v.`itersnap_w_adel` IS NOT NULL);
-- replay: derive
INSERT INTO `itersnap_metadata`.`itersnap_work_customers` (`id`, `status`, `updated_at`, `file_date`, `itersnap_idx`, `itersnap_action`, `itersnap_t`, `itersnap_tt`, `itersnap_reg`, `itersnap_scc`, `itersnap_oidx`, `itersnap_upto`) WITH `itersnap_q0` AS (SELECT s.`id` AS `id`,
    s.`status` AS `status`,
    s.`updated_at` AS `updated_at`,
    s.`file_date` AS `file_date`,
    b.`itersnap_idx` AS `itersnap_idx`,
    CASE WHEN s.`itersnap_del` THEN 'D' ELSE 'U' END AS `itersnap_kind`,
    CAST(NULL AS STRING) AS `itersnap_istate`,
    CAST(NULL AS TIMESTAMP) AS `itersnap_ivf`,
    CAST(NULL AS TIMESTAMP) AS `itersnap_iupd`,
    CAST(NULL AS TIMESTAMP) AS `itersnap_iend`,
    bn.`itersnap_nd` AS `itersnap_w_nd_after`
  FROM `itersnap_metadata`.`itersnap_stage_customers` s
  JOIN `itersnap_metadata`.`itersnap_keys_customers` k ON k.`id` = s.`id`
  JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date` AND b.`itersnap_idx` >= k.`itersnap_from`
  LEFT
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bn ON bn.`itersnap_idx` = b.`itersnap_idx` + 1
  WHERE s.`itersnap_reject` IS NULL
  UNION ALL
  SELECT sa.`id` AS `id`,
    CAST(NULL AS STRING) AS `status`,
    CAST(NULL AS TIMESTAMP) AS `updated_at`,
    CAST(NULL AS DATE) AS `file_date`,
    sa.`itersnap_w_ix`,
    sa.`itersnap_w_kd`,
    CAST(NULL AS STRING),
    CAST(NULL AS TIMESTAMP),
    CAST(NULL AS TIMESTAMP),
    CAST(NULL AS TIMESTAMP),
    sa.`itersnap_w_nd_after`
  FROM (SELECT DISTINCT s.`id`,
      b.`itersnap_idx` AS `itersnap_w_ix`,
      CASE WHEN s.`itersnap_reject` = 'updated_at_regression' THEN 'G' ELSE 'R' END AS `itersnap_w_kd`,
      bn.`itersnap_nd` AS `itersnap_w_nd_after`
    FROM `itersnap_metadata`.`itersnap_stage_customers` s
    JOIN `itersnap_metadata`.`itersnap_keys_customers` k ON k.`id` = s.`id`
    JOIN `itersnap_metadata`.`itersnap_batches_customers` b ON b.`file_date` = s.`file_date` AND b.`itersnap_idx` >= k.`itersnap_from`
    LEFT
    JOIN `itersnap_metadata`.`itersnap_batches_customers` bn ON bn.`itersnap_idx` = b.`itersnap_idx` + 1
    WHERE s.`itersnap_reject` IN ('duplicate_key', 'null_updated_at', 'updated_at_regression')) sa
  UNION ALL
  SELECT h.`id` AS `id`,
    h.`status` AS `status`,
    h.`updated_at` AS `updated_at`,
    h.`file_date` AS `file_date`,
    0,
    'I',
    CASE WHEN COALESCE(h.`dbt_is_deleted`, FALSE) THEN 'drec' ELSE 'live' END,
    h.`dbt_valid_from`,
    h.`dbt_updated_at`,
    CAST(NULL AS TIMESTAMP),
    bn.`itersnap_nd` AS `itersnap_w_nd_after`
  FROM `itersnap_metadata`.`itersnap_keys_customers` k
  JOIN `snap`.`customers` h ON k.`id` = h.`id` AND h.`dbt_valid_to` IS NULL
  LEFT
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bn ON bn.`itersnap_idx` = k.`itersnap_from`
  UNION ALL
  SELECT itersnap_outer_h.`id` AS `id`,
    CAST(NULL AS STRING) AS `status`,
    CAST(NULL AS TIMESTAMP) AS `updated_at`,
    CAST(NULL AS DATE) AS `file_date`,
    0,
    'I',
    'closed',
    CAST(NULL AS TIMESTAMP),
    CAST(NULL AS TIMESTAMP),
    MAX(itersnap_outer_h.`dbt_valid_to`),
    MAX(bn.`itersnap_nd`)
  FROM `itersnap_metadata`.`itersnap_keys_customers` k
  JOIN `snap`.`customers` itersnap_outer_h ON k.`id` = itersnap_outer_h.`id`
  LEFT
  JOIN `itersnap_metadata`.`itersnap_batches_customers` bn ON bn.`itersnap_idx` = k.`itersnap_from`
  WHERE NOT EXISTS (SELECT 1
    FROM `snap`.`customers` o
    WHERE o.`id` = itersnap_outer_h.`id` AND o.`dbt_valid_to` IS NULL)
  GROUP BY itersnap_outer_h.`id`), `itersnap_q1` AS (SELECT r.*,
    CASE WHEN r.`itersnap_kind` = 'U' AND LAG(r.`itersnap_kind`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) = 'U' AND LAG(r.`itersnap_idx`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) = r.`itersnap_idx` - 1 AND NOT (LAG(r.`status`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) IS DISTINCT FROM r.`status`) AND NOT (LAG(r.`updated_at`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) IS DISTINCT FROM r.`updated_at`) THEN 1 ELSE 0 END AS `itersnap_w_rp`,
    CASE WHEN r.`itersnap_kind` = 'U' AND LEAD(r.`itersnap_kind`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) = 'U' AND LEAD(r.`itersnap_idx`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) = r.`itersnap_idx` + 1 AND NOT (LEAD(r.`status`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) IS DISTINCT FROM r.`status`) AND NOT (LEAD(r.`updated_at`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) IS DISTINCT FROM r.`updated_at`) THEN 1 ELSE 0 END AS `itersnap_w_rn`
  FROM `itersnap_q0` r), `itersnap_q2` AS (SELECT k.`id`,
    k.`status`,
    k.`updated_at`,
    k.`file_date`,
    k.`itersnap_idx`,
    k.`itersnap_kind`,
    k.`itersnap_istate`,
    k.`itersnap_ivf`,
    k.`itersnap_iupd`,
    k.`itersnap_iend`,
    CASE WHEN k.`itersnap_w_rn` = 1 THEN NULL ELSE k.`itersnap_w_nd_after` END AS `itersnap_w_nd_after`,
    k.`itersnap_w_rn`
  FROM `itersnap_q1` k
  WHERE NOT (k.`itersnap_w_rp` = 1 AND k.`itersnap_w_rn` = 1)), `itersnap_q3` AS (SELECT r.*,
    LAG(r.`itersnap_w_nd_after`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) AS `itersnap_w_prev_nd`,
    LEAD(r.`itersnap_idx`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) AS `itersnap_w_next_idx`,
    CASE WHEN r.`itersnap_w_rn` = 1 THEN LEAD(r.`itersnap_idx`) OVER (PARTITION BY r.`id` ORDER BY r.`itersnap_idx`) ELSE r.`itersnap_idx` + 1 END AS `itersnap_w_upto`
  FROM `itersnap_q2` r), `itersnap_q4` AS (SELECT y.*,
    SUM(CASE WHEN y.`itersnap_w_prev_nd` < y.`itersnap_idx` THEN 1 ELSE 0 END) OVER (PARTITION BY y.`id` ORDER BY y.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_g`
  FROM `itersnap_q3` y), `itersnap_q5` AS (SELECT z.*,
    MAX(CASE z.`itersnap_kind` WHEN 'U' THEN z.`itersnap_idx` * 4 + 1 WHEN 'D' THEN z.`itersnap_idx` * 4 + 2 WHEN 'I' THEN (CASE WHEN z.`itersnap_istate` = 'live' THEN 3 ELSE 0 END) END) OVER (PARTITION BY z.`id` ORDER BY z.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_pud`,
    MAX(CASE WHEN z.`itersnap_kind` IN ('U', 'D', 'I') THEN z.`itersnap_w_g` END) OVER (PARTITION BY z.`id` ORDER BY z.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_gud`
  FROM `itersnap_q4` z), `itersnap_q6` AS (SELECT v.*,
    CASE WHEN v.`itersnap_w_pud` IS NULL THEN FALSE WHEN v.`itersnap_w_g` > v.`itersnap_w_gud` THEN FALSE ELSE MOD(v.`itersnap_w_pud`, 4) IN (1, 3) END AS `itersnap_w_lb`,
    CASE v.`itersnap_kind` WHEN 'U' THEN TRUE WHEN 'D' THEN FALSE WHEN 'I' THEN v.`itersnap_istate` = 'live' ELSE CASE WHEN v.`itersnap_w_pud` IS NULL THEN FALSE WHEN v.`itersnap_w_g` > v.`itersnap_w_gud` THEN FALSE ELSE MOD(v.`itersnap_w_pud`, 4) IN (1, 3) END END AS `itersnap_w_la`,
    SUM(CASE WHEN v.`itersnap_kind` = 'U' AND NOT (CASE WHEN v.`itersnap_w_pud` IS NULL THEN FALSE WHEN v.`itersnap_w_g` > v.`itersnap_w_gud` THEN FALSE ELSE MOD(v.`itersnap_w_pud`, 4) IN (1, 3) END) THEN 1 ELSE 0 END) OVER (PARTITION BY v.`id` ORDER BY v.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_streak`,
    COUNT(CASE WHEN v.`itersnap_kind` IN ('U', 'I') THEN 1 END) OVER (PARTITION BY v.`id` ORDER BY v.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_ug`
  FROM `itersnap_q5` v), `itersnap_q7` AS (SELECT itersnap_outer_x.*,
    CASE WHEN itersnap_outer_x.`itersnap_w_la` AND itersnap_outer_x.`itersnap_w_nd_after` IS NOT NULL AND (itersnap_outer_x.`itersnap_w_next_idx` IS NULL OR itersnap_outer_x.`itersnap_w_nd_after` < itersnap_outer_x.`itersnap_w_next_idx`) THEN itersnap_outer_x.`itersnap_w_nd_after` END AS `itersnap_w_adel`,
    FIRST_VALUE(itersnap_outer_x.`status`) OVER (PARTITION BY itersnap_outer_x.`id`, itersnap_outer_x.`itersnap_w_ug` ORDER BY itersnap_outer_x.`itersnap_idx`) AS `itersnap_w_pv0`
  FROM `itersnap_q6` itersnap_outer_x), `itersnap_q8` AS (SELECT itersnap_outer_x.*,
    CASE WHEN itersnap_outer_x.`itersnap_kind` = 'I' THEN ('i' || itersnap_outer_x.`itersnap_istate`) WHEN itersnap_outer_x.`itersnap_kind` = 'U' AND NOT itersnap_outer_x.`itersnap_w_lb` THEN 'open' WHEN itersnap_outer_x.`itersnap_kind` = 'U' AND ((LAG(itersnap_outer_x.`itersnap_w_pv0`) OVER (PARTITION BY itersnap_outer_x.`id` ORDER BY itersnap_outer_x.`itersnap_w_ug`, itersnap_outer_x.`itersnap_idx`) IS DISTINCT FROM itersnap_outer_x.`status`)) THEN 'change' WHEN itersnap_outer_x.`itersnap_kind` = 'U' THEN 'noop' WHEN itersnap_outer_x.`itersnap_kind` = 'D' AND itersnap_outer_x.`itersnap_w_lb` THEN 'delete' WHEN itersnap_outer_x.`itersnap_kind` = 'D' THEN 'delnoop' WHEN itersnap_outer_x.`itersnap_kind` = 'G' THEN 'regr' ELSE 'present' END AS `itersnap_w_act`,
    CASE WHEN itersnap_outer_x.`itersnap_kind` = 'I' THEN (CASE WHEN itersnap_outer_x.`itersnap_istate` = 'closed' THEN itersnap_outer_x.`itersnap_iend` ELSE itersnap_outer_x.`itersnap_ivf` END) ELSE itersnap_outer_x.`updated_at` END AS `itersnap_w_t`,
    CASE WHEN itersnap_outer_x.`itersnap_w_adel` IS NOT NULL THEN (SELECT MAX(ba.`itersnap_deltime`)
    FROM `itersnap_metadata`.`itersnap_batches_customers` ba
    WHERE ba.`itersnap_idx` = itersnap_outer_x.`itersnap_w_adel`) END AS `itersnap_w_ta`
  FROM `itersnap_q7` itersnap_outer_x), `itersnap_q9` AS (SELECT s.*,
    MAX(CASE WHEN s.`itersnap_w_act` IN ('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent') THEN s.`itersnap_w_t` END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_tsc`,
    MAX(CASE WHEN s.`itersnap_w_act` IN ('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent') THEN s.`itersnap_w_t` END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_tpc`,
    MAX(s.`itersnap_w_ta`) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_tab`,
    COUNT(CASE WHEN s.`itersnap_w_act` IN ('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent') THEN 1 END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS UNBOUNDED PRECEDING) + COUNT(s.`itersnap_w_adel`) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_scc`,
    MAX(CASE WHEN s.`itersnap_w_adel` IS NOT NULL THEN s.`itersnap_w_adel` * 2 + 1 WHEN s.`itersnap_w_act` IN ('ilive', 'idrec', 'iclosed', 'open', 'change', 'delete', 'absent') THEN s.`itersnap_idx` * 2 + (CASE WHEN s.`itersnap_w_act` IN ('delete', 'idrec') THEN 1 ELSE 0 END) END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS `itersnap_w_pdel`,
    MAX(CASE WHEN s.`itersnap_w_act` IN ('open', 'change', 'ilive') THEN s.`itersnap_idx` END) OVER (PARTITION BY s.`id` ORDER BY s.`itersnap_w_ug`, s.`itersnap_idx` ROWS UNBOUNDED PRECEDING) AS `itersnap_w_oidx`
  FROM `itersnap_q8` s), `itersnap_q10` AS (SELECT o.*,
    FIRST_VALUE(o.`status`) OVER (PARTITION BY o.`id`, o.`itersnap_w_oidx` ORDER BY o.`itersnap_w_ug`, o.`itersnap_idx`) AS `itersnap_w_ov0`,
    FIRST_VALUE(o.`updated_at`) OVER (PARTITION BY o.`id`, o.`itersnap_w_oidx` ORDER BY o.`itersnap_w_ug`, o.`itersnap_idx`) AS `itersnap_w_ov1`
  FROM `itersnap_q9` o), `itersnap_q11` AS (SELECT y.`id`,
    y.`status`,
    y.`updated_at`,
    y.`file_date`,
    y.`itersnap_idx`,
    CASE WHEN y.`itersnap_w_act` = 'open' THEN (CASE WHEN MOD(y.`itersnap_w_pdel`, 2) = 1 THEN 'return' ELSE 'insert' END) ELSE y.`itersnap_w_act` END AS `itersnap_w_action`,
    y.`itersnap_w_t`,
    CASE WHEN y.`itersnap_w_tab` IS NULL OR y.`itersnap_w_tsc` >= y.`itersnap_w_tab` THEN y.`itersnap_w_tsc` ELSE y.`itersnap_w_tab` END AS `itersnap_w_tt`,
    CASE WHEN y.`itersnap_w_act` IN ('change', 'delete') AND y.`itersnap_w_t` < CASE WHEN y.`itersnap_w_tab` IS NULL OR y.`itersnap_w_tpc` >= y.`itersnap_w_tab` THEN y.`itersnap_w_tpc` ELSE y.`itersnap_w_tab` END THEN TRUE ELSE FALSE END AS `itersnap_w_reg`,
    y.`itersnap_w_scc`,
    y.`itersnap_w_oidx`,
    y.`itersnap_w_adel`,
    y.`itersnap_w_ta`,
    y.`itersnap_w_upto`,
    CASE WHEN y.`itersnap_w_act` IN ('present', 'regr') OR (y.`itersnap_w_act` = 'noop' AND NOT ((y.`itersnap_w_ov0` IS DISTINCT FROM y.`status`) OR (y.`itersnap_w_ov1` IS DISTINCT FROM y.`updated_at`))) THEN FALSE ELSE TRUE END AS `itersnap_w_kept`
  FROM `itersnap_q10` y)
SELECT v.`id`,
  CASE WHEN n.`itersnap_w_n` = 1 THEN NULL ELSE v.`status` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN NULL ELSE v.`updated_at` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN NULL ELSE v.`file_date` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN v.`itersnap_w_adel` ELSE v.`itersnap_idx` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN 'absent' ELSE v.`itersnap_w_action` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN v.`itersnap_w_ta` ELSE v.`itersnap_w_t` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN CASE WHEN v.`itersnap_w_ta` IS NULL OR v.`itersnap_w_tt` >= v.`itersnap_w_ta` THEN v.`itersnap_w_tt` ELSE v.`itersnap_w_ta` END ELSE v.`itersnap_w_tt` END,
  CASE WHEN n.`itersnap_w_n` = 1 THEN FALSE ELSE v.`itersnap_w_reg` END,
  CAST(v.`itersnap_w_scc` + n.`itersnap_w_n` AS INT),
  v.`itersnap_w_oidx`,
  v.`itersnap_w_upto`
FROM `itersnap_q11` v
JOIN (SELECT 0 AS `itersnap_w_n`
  UNION ALL
  SELECT 1 AS `itersnap_w_n`) n ON (n.`itersnap_w_n` = 0 AND v.`itersnap_w_kept`) OR (n.`itersnap_w_n` = 1 AND v.`itersnap_w_adel` IS NOT NULL);
-- replay: resetRegressions
UPDATE `itersnap_metadata`.`itersnap_stage_customers`
SET `itersnap_reject` = NULL
WHERE `itersnap_reject` = 'updated_at_regression';
-- timelineCheck
SELECT r.`id`,
  r.itersnap_broken,
  r.itersnap_os
FROM (SELECT v.`id`,
    CASE WHEN v.itersnap_op = 1 AND v.itersnap_cs IS NOT NULL THEN 'reopened' WHEN v.itersnap_op = 0 AND v.itersnap_cs IS NULL THEN 'closed_without_batch' WHEN v.itersnap_open_count > 1 AND v.itersnap_op = 1 THEN 'open_twice' WHEN v.itersnap_op = 1 AND v.itersnap_next_os IS NOT NULL THEN 'open_not_last' WHEN v.itersnap_op = 1 THEN NULL WHEN v.itersnap_ct = 'update' AND (v.itersnap_next_os IS NULL OR v.itersnap_next_os <> v.itersnap_cs) THEN 'successor_missing' WHEN v.itersnap_next_os IS NULL AND (v.itersnap_ct IS NULL OR v.itersnap_ct <> 'delete') THEN 'closed_last' WHEN v.itersnap_next_os IS NOT NULL AND v.itersnap_next_os < v.itersnap_cs THEN 'successor_early' WHEN v.itersnap_vt < v.itersnap_vf THEN 'inverted' WHEN v.itersnap_next_vf IS NOT NULL AND v.itersnap_next_vf < v.itersnap_vt THEN 'overlap' WHEN v.itersnap_ct = 'update' AND v.itersnap_next_vf IS NOT NULL AND v.itersnap_next_vf <> v.itersnap_vt THEN 'gap' END AS itersnap_broken,
    v.itersnap_os
  FROM (SELECT h.`id`,
      h.`dbt_opened_seq` AS itersnap_os,
      h.`dbt_closed_seq` AS itersnap_cs,
      h.`dbt_valid_from` AS itersnap_vf,
      h.`dbt_valid_to` AS itersnap_vt,
      h.`dbt_change_type` AS itersnap_ct,
      CASE WHEN h.`dbt_valid_to` IS NULL THEN 1 ELSE 0 END AS itersnap_op,
      SUM(CASE WHEN h.`dbt_valid_to` IS NULL THEN 1 ELSE 0 END) OVER (PARTITION BY h.`id`) AS itersnap_open_count,
      LEAD(h.`dbt_opened_seq`) OVER (PARTITION BY h.`id` ORDER BY h.`dbt_opened_seq`, h.`dbt_valid_from`, CASE WHEN h.`dbt_valid_to` IS NULL THEN 1 ELSE 0 END, h.`dbt_valid_to`) AS itersnap_next_os,
      LEAD(h.`dbt_valid_from`) OVER (PARTITION BY h.`id` ORDER BY h.`dbt_opened_seq`, h.`dbt_valid_from`, CASE WHEN h.`dbt_valid_to` IS NULL THEN 1 ELSE 0 END, h.`dbt_valid_to`) AS itersnap_next_vf
    FROM (SELECT x.`id`
      FROM `snap`.`customers` x
      WHERE x.`dbt_opened_seq` >= CAST(? AS DATE) UNION
      SELECT x.`id`
      FROM `snap`.`customers` x
      WHERE x.`dbt_closed_seq` >= CAST(? AS DATE)) k
    JOIN `snap`.`customers` h ON k.`id` = h.`id`) v) r
WHERE r.itersnap_broken IS NOT NULL;
-- editedVersions
SELECT r.`id`,
  r.itersnap_broken,
  r.itersnap_os
FROM (SELECT v.`id`,
    CASE WHEN v.itersnap_op = 1 AND v.itersnap_cs IS NOT NULL THEN 'reopened' WHEN v.itersnap_op = 0 AND v.itersnap_cs IS NULL THEN 'closed_without_batch' WHEN v.itersnap_os <= CAST(? AS DATE) AND ((v.itersnap_cs IS NOT NULL AND v.itersnap_cs <= CAST(? AS DATE)) OR (v.itersnap_next_os IS NOT NULL AND v.itersnap_next_os <= CAST(? AS DATE)) OR (v.itersnap_next_os IS NULL AND v.itersnap_cs IS NULL)) THEN NULL WHEN v.itersnap_open_count > 1 AND v.itersnap_op = 1 THEN 'open_twice' WHEN v.itersnap_op = 1 AND v.itersnap_next_os IS NOT NULL THEN 'open_not_last' WHEN v.itersnap_op = 1 THEN NULL WHEN v.itersnap_ct = 'update' AND (v.itersnap_next_os IS NULL OR v.itersnap_next_os <> v.itersnap_cs) THEN 'successor_missing' WHEN v.itersnap_next_os IS NULL AND (v.itersnap_ct IS NULL OR v.itersnap_ct <> 'delete') THEN 'closed_last' WHEN v.itersnap_next_os IS NOT NULL AND v.itersnap_next_os < v.itersnap_cs THEN 'successor_early' WHEN v.itersnap_vt < v.itersnap_vf THEN 'inverted' WHEN v.itersnap_next_vf IS NOT NULL AND v.itersnap_next_vf < v.itersnap_vt THEN 'overlap' WHEN v.itersnap_ct = 'update' AND v.itersnap_next_vf IS NOT NULL AND v.itersnap_next_vf <> v.itersnap_vt THEN 'gap' END AS itersnap_broken,
    v.itersnap_os
  FROM (SELECT h.`id`,
      h.`dbt_opened_seq` AS itersnap_os,
      h.`dbt_closed_seq` AS itersnap_cs,
      h.`dbt_valid_from` AS itersnap_vf,
      h.`dbt_valid_to` AS itersnap_vt,
      h.`dbt_change_type` AS itersnap_ct,
      CASE WHEN h.`dbt_valid_to` IS NULL THEN 1 ELSE 0 END AS itersnap_op,
      SUM(CASE WHEN h.`dbt_valid_to` IS NULL THEN 1 ELSE 0 END) OVER (PARTITION BY h.`id`) AS itersnap_open_count,
      LEAD(h.`dbt_opened_seq`) OVER (PARTITION BY h.`id` ORDER BY h.`dbt_opened_seq`, h.`dbt_valid_from`, CASE WHEN h.`dbt_valid_to` IS NULL THEN 1 ELSE 0 END, h.`dbt_valid_to`) AS itersnap_next_os,
      LEAD(h.`dbt_valid_from`) OVER (PARTITION BY h.`id` ORDER BY h.`dbt_opened_seq`, h.`dbt_valid_from`, CASE WHEN h.`dbt_valid_to` IS NULL THEN 1 ELSE 0 END, h.`dbt_valid_to`) AS itersnap_next_vf
    FROM `itersnap_metadata`.`itersnap_keys_customers` k
    JOIN `snap`.`customers` h ON k.`id` = h.`id`) v) r
WHERE r.itersnap_broken IS NOT NULL;
-- openedVersions
SELECT h.`dbt_opened_seq`,
  COUNT(*)
FROM `snap`.`customers` h
WHERE h.`dbt_opened_seq` IN (CAST(? AS DATE))
GROUP BY h.`dbt_opened_seq`;
-- asOf
SELECT h.*
FROM `snap`.`customers` h
WHERE h.`dbt_valid_from` <= CAST('2024-03-01 00:00' AS TIMESTAMP) AND (h.`dbt_valid_to` IS NULL OR h.`dbt_valid_to` > CAST('2024-03-01 00:00' AS TIMESTAMP)) AND h.`dbt_is_deleted` = FALSE;
