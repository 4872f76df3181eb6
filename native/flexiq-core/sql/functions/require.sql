-- Refuses invalid input to a public function: raises SQLSTATE 22023 (invalid parameter value)
-- with the message when the condition does not hold.
CREATE OR REPLACE FUNCTION {schema}.require(p_ok boolean, p_message text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_ok IS NOT TRUE THEN
        RAISE EXCEPTION USING ERRCODE = '22023', MESSAGE = 'flexiq.enqueue: ' || p_message;
    END IF;
END
$$;
